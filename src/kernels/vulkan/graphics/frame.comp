// The frame's storage write and its read (src/kernels/vulkan/README.md,
// "Graphics shaders"), in 16x16 work-groups over the frame's pixels.
//   ENTRY_STORE  imageStore of frame_texel (graphics.cpp) into an rgba8 storage image
//   ENTRY_READ   texelFetch of every pixel of a sampled RGBA8 image, the sum of
//                its channels (0..255 each) added into a 64-bit (lo, hi) pair

layout(local_size_x = 16, local_size_y = 16) in;

#if defined(ENTRY_STORE)
layout(set = 0, binding = 0, rgba8) writeonly uniform image2D img;
layout(push_constant) uniform Args { uint width; uint height; uint pattern; uint block_px; uint seed; } args;

// mix() of graphics.cpp, as in rect.frag.
uint mix_hash(uint seed, uint cx, uint cy) {
  uint h = seed * 0x9E3779B1u ^ cx * 0x85EBCA77u ^ cy * 0xC2B2AE3Du;
  h ^= h >> 16;
  h *= 0x7FEB352Du;
  h ^= h >> 15;
  h *= 0x846CA68Bu;
  h ^= h >> 16;
  return h;
}

void main() {
  const uvec2 p = gl_GlobalInvocationID.xy;
  if (p.x >= args.width || p.y >= args.height) return;
  uvec2 c = uvec2(0u);
  if (args.pattern == 1u) c = p / max(args.block_px, 1u);
  else if (args.pattern == 2u) c = p;
  imageStore(img, ivec2(p), unpackUnorm4x8(mix_hash(args.seed, c.x, c.y) | 0xFF000000u));
}

#elif defined(ENTRY_READ)
layout(set = 0, binding = 0) uniform sampler2D img;
layout(set = 0, binding = 1) buffer Sum { uint lo; uint hi; };
layout(push_constant) uniform Args { uint width; uint height; } args;

shared uint partial[256];

void main() {
  const uvec2 p = gl_GlobalInvocationID.xy;
  uint v = 0u;
  if (p.x < args.width && p.y < args.height) {
    const uvec4 u = uvec4(round(texelFetch(img, ivec2(p), 0) * 255.0));
    v = u.x + u.y + u.z + u.w;
  }
  partial[gl_LocalInvocationIndex] = v;
  barrier();
  for (uint s = 128u; s > 0u; s >>= 1) {
    if (gl_LocalInvocationIndex < s) partial[gl_LocalInvocationIndex] += partial[gl_LocalInvocationIndex + s];
    barrier();
  }
  if (gl_LocalInvocationIndex == 0u) {
    const uint s = partial[0];
    const uint old = atomicAdd(lo, s);
    if (old + s < old) atomicAdd(hi, 1u);  // lo wrapped: carry
  }
}
#endif
