// The texture (image) path: the twin of opencl/texture.cl (which says why
// the kernels look as they do): latency by dependent chase through texel
// fetches, bandwidth by many independent ones, and a chase that alternates
// between the texture path and the load/store path.
//
// Parameters:
//   IMAGE_2D=0|1   0: the image is a buffer view, read as a uniform texel
//                  buffer (usamplerBuffer; descriptor
//                  VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER, format
//                  R32G32B32A32_UINT), pixel i addressed as i; 1: a 2D image
//                  of width 1 << WIDTH_LOG2 pixels read through a combined
//                  image sampler (usampler2D; VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER),
//                  pixel i at (i & (width-1), i >> WIDTH_LOG2)
//   WIDTH_LOG2=n   the 2D image's width, log2 of pixels (ignored for 1D)
//
// Both are read with texelFetch: integer coordinates, no filtering, no
// normalisation, through the texture unit (OpenCL's read_imageui with a
// nearest, unnormalised sampler). Pixels are RGBA 32-bit unsigned integers;
// a chase pixel holds in .x the linear index of the next pixel.
//
// Arguments (bindings by position, as every family's):
//   link(words, next; slot_words, value_per_slot, base_slot, count)
//   chase(img; start, rounds; end)                          img 0, end 3
//   pair_chase(img, words; t_start, g_start, zero, rounds; end)  img 0, words 1, end 6
//   bandwidth(img; pixel_mask, group_stride, reads; sums)   img 0, sums 4

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(constant_id = 3) const uint LOCAL_WORDS = 1;

#if !defined(ENTRY_LINK)
#if IMAGE_2D
layout(set = 0, binding = 0) uniform usampler2D img;
#define FETCH(i) \
  texelFetch(img, ivec2(int((i) & ((1u << WIDTH_LOG2) - 1u)), int((i) >> WIDTH_LOG2)), 0)
#else
layout(set = 0, binding = 0) uniform usamplerBuffer img;
#define FETCH(i) texelFetch(img, int(i))
#endif
#endif

#if defined(ENTRY_LINK)
layout(set = 0, binding = 0) writeonly buffer Words { uint words[]; };
layout(set = 0, binding = 1) readonly buffer Next { uint next[]; };
layout(push_constant) uniform Args {
  uint slot_words;
  uint value_per_slot;
  uint base_slot;
  uint count;
} args;

// One invocation per chase slot: writes slot i's successor, scaled to the
// unit the chase indexes in, at slot i's place in the backing buffer.
void main() {
  const uint i = gl_GlobalInvocationID.x;
  if (i < args.count) words[(args.base_slot + i) * args.slot_words] = (args.base_slot + next[i]) * args.value_per_slot;
}
#endif

#define HOP t = FETCH(t).x;
#define HOP4 HOP HOP HOP HOP
#define HOP16 HOP4 HOP4 HOP4 HOP4

#if defined(ENTRY_CHASE)
layout(set = 0, binding = 3) writeonly buffer End { uint end_[]; };
layout(push_constant) uniform Args {
  uint start;
  uint rounds;
} args;

// One invocation walks rounds x 16 dependent fetches from pixel `start`.
void main() {
  uint t = args.start;
  for (uint r = 0; r < args.rounds; ++r) {
    HOP16
  }
  end_[0] = t;
}
#endif

#if defined(ENTRY_PAIR_CHASE)
layout(set = 0, binding = 1) readonly buffer Words { uint words[]; };
layout(set = 0, binding = 6) writeonly buffer End { uint end_[]; };
layout(push_constant) uniform Args {
  uint t_start;
  uint g_start;
  uint zero;
  uint rounds;
} args;

// Two chains, one through the texture path and one through the load/store
// path, each step's index OR-ed with the other chain's latest value AND
// `zero` (0, unknown to the compiler), so the two run one after the other.
#define PAIR                           \
  t = FETCH(t | (g & args.zero)).x;  \
  g = words[g | (t & args.zero)];
#define PAIR4 PAIR PAIR PAIR PAIR
#define PAIR8 PAIR4 PAIR4

void main() {
  uint t = args.t_start, g = args.g_start;
  for (uint r = 0; r < args.rounds; ++r) {
    PAIR8
  }
  end_[0] = t;
  end_[1] = g;
}
#endif

#if defined(ENTRY_BANDWIDTH)
layout(set = 0, binding = 4) writeonly buffer Sums { uint sums[]; };
layout(push_constant) uniform Args {
  uint pixel_mask;
  uint group_stride;
  uint reads;
} args;

// Every invocation makes `reads` independent fetches: read k of a
// work-group reads pixel (group_id * group_stride + k * local_size +
// local_id) mod the footprint; all four channels go into the stored sum.
void main() {
  const uint lid = gl_LocalInvocationID.x;
  const uint lsize = gl_WorkGroupSize.x;
  uint i = gl_WorkGroupID.x * args.group_stride + lid;
  uvec4 acc = uvec4(0);
  for (uint k = 0; k < args.reads; ++k) {
    acc += FETCH(i & args.pixel_mask);
    i += lsize;
  }
  sums[gl_GlobalInvocationID.x] = acc.x + acc.y + acc.z + acc.w;
}
#endif
