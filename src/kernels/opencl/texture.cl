// The texture (image) path: latency by dependent chase through read_imageui,
// bandwidth by many independent reads, and a chase that alternates between
// the texture path and the load/store path to see whether they share a cache.
//
// Build options:
//   -DIMAGE_2D=0|1   0: the image is an image1d_buffer_t (pixel i is
//                    addressed as i); 1: an image2d_t of width 1 << WIDTH_LOG2
//                    pixels (pixel i is at (i & (width-1), i >> WIDTH_LOG2))
//   -DWIDTH_LOG2=n   the 2D image's width, log2 of pixels (ignored for 1D)
//
// Pixels are RGBA 32-bit unsigned integers (16 bytes, the format every
// OpenCL 1.2 image device must support). A chase pixel holds in .x the
// linear index of the next pixel to visit; .yzw are don't-care. Indices
// rather than addresses: an image is addressed by coordinates, never by
// pointer, so the only arithmetic on the chain is the 2D split (an AND and a
// shift, about 2 cycles of a ~30+ cycle texture fetch) and none for 1D.

// The image type is a macro, not a typedef: PoCL 3.1 compiles a kernel
// whose image parameter is a typedef of "__read_only image1d_buffer_t" but
// every read_imageui through it returns 0.
#if IMAGE_2D
#define IMAGE_T __read_only image2d_t
// No filtering, no normalisation, no addressing mode: the sampler asks for
// the texel at exactly these integer coordinates, so the texture unit does
// no arithmetic on the value and the result is the stored 32-bit word.
__constant sampler_t kNearest = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_NONE | CLK_FILTER_NEAREST;
#define FETCH(img, i) \
  read_imageui(img, kNearest, (int2)((int)((i) & ((1u << WIDTH_LOG2) - 1u)), (int)((i) >> WIDTH_LOG2)))
#else
#define IMAGE_T __read_only image1d_buffer_t
#define FETCH(img, i) read_imageui(img, (int)(i))
#endif

// One work-item per chase slot: writes slot i's successor, scaled to the
// unit the chase indexes in, at slot i's place in the backing buffer; a
// cycle laid at base_slot occupies slots base_slot .. base_slot + count - 1
// (two texture cycles share one image in pair_chase). Used
// for 1D buffer images (value_per_slot = slot stride in pixels, slot_words =
// 4 x that) and for the load/store chase of pair_chase (value_per_slot =
// slot_words = the slot stride in 32-bit words). Done on the device so that
// the host sends 4 bytes per slot instead of a whole footprint.
__kernel void link(__global uint* words, __global const uint* next, uint slot_words, uint value_per_slot,
                   uint base_slot, uint count) {
  const uint i = (uint)get_global_id(0);
  if (i < count) words[(size_t)(base_slot + i) * slot_words] = (base_slot + next[i]) * value_per_slot;
}

#define HOP t = FETCH(img, t).x;
#define HOP4 HOP HOP HOP HOP
#define HOP16 HOP4 HOP4 HOP4 HOP4

// A single work-item walks rounds x 16 dependent texture fetches from pixel
// `start`: each fetch's coordinate is the previous fetch's value, so the
// time per hop is the texture path's load-to-use latency at this footprint.
// The pixel it ends on is written out for the host to check against its own
// walk (a compiler that dropped the fetches would be caught, not timed).
__kernel void chase(IMAGE_T img, uint start, uint rounds, __global uint* end) {
  uint t = start;
  for (uint r = 0; r < rounds; ++r) {
    HOP16
  }
  end[0] = t;
}

// Two chains, one through the texture path (pixel indices in `img`) and one
// through the load/store path (word indices in `words`), advanced
// alternately. Each step's index is OR-ed with the other chain's latest
// value AND `zero` (a kernel argument the host sets to 0, which the compiler
// cannot see): the OR changes nothing, but it makes every fetch wait for the
// previous load of the other chain, so the two chains run one after the
// other and the time per round is texture latency + load/store latency
// instead of the larger of the two. Both ends are written out and checked.
#define PAIR                          \
  t = FETCH(img, t | (g & zero)).x; \
  g = words[g | (t & zero)];
#define PAIR4 PAIR PAIR PAIR PAIR
#define PAIR8 PAIR4 PAIR4

__kernel void pair_chase(IMAGE_T img, __global const uint* words, uint t_start, uint g_start, uint zero,
                         uint rounds, __global uint* end) {
  uint t = t_start, g = g_start;
  for (uint r = 0; r < rounds; ++r) {
    PAIR8
  }
  end[0] = t;
  end[1] = g;
}

// Texture bandwidth: every work-item makes `reads` independent fetches
// (nothing depends on a previous fetch, so the texture units can keep as
// many in flight as they hold). Read k of a work-group reads pixel
// (group_id * group_stride + k * local_size + local_id) mod the footprint
// (pixel_mask + 1 pixels, a power of two): a work-group's lanes read
// consecutive pixels, as a texture unit serves best, and the host spreads
// the work-groups' starts over the footprint (group_stride), so that a
// footprint that fits a cache is served from it and one that does not
// streams from the level behind. All four
// channels go into a sum that is stored per work-item, so neither the
// fetches nor their width can be optimised away; the host recomputes
// the sums of a sample of work-items.
__kernel void bandwidth(IMAGE_T img, uint pixel_mask, uint group_stride, uint reads, __global uint* sums) {
  const uint lid = (uint)get_local_id(0);
  const uint lsize = (uint)get_local_size(0);
  uint i = (uint)get_group_id(0) * group_stride + lid;
  uint4 acc = (uint4)(0);
  for (uint k = 0; k < reads; ++k) {
    acc += FETCH(img, i & pixel_mask);
    i += lsize;
  }
  sums[get_global_id(0)] = acc.x + acc.y + acc.z + acc.w;
}
