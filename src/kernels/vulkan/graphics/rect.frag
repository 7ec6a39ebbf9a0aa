// What the rectangles' fragments compute (src/kernels/vulkan/README.md,
// "Graphics shaders"). Defines:
//   N_COLOUR=n            colour attachments 0..n-1 (0..8), each written the same colour
//   SHADING_FLAT          rectangle i writes flat_colour(i) (backends/graphics.cpp)
//   SHADING_TRACE         as flat, after taking a ticket from `counter` and,
//                         at pixels on the stride grid, keeping the lowest
//                         ticket of (pixel, rectangle) in `field`
//   SHADING_TEXTURED      the mean of `samples` samples of `tex`; TEX_MODE
//                         0 point, 1 bilinear, 2 trilinear, 3 anisotropic
//   SHADING_FRAME         the frame pattern's texel (frame_texel in graphics.cpp)
//   MAY_DISCARD           (flat, textured) discards a fragment whose rectangle
//                         is push constant `never`, which the host sets to no
//                         rectangle (0xFFFFFFFF): nothing is discarded, but no
//                         fragment is known opaque before it runs, so
//                         hidden-surface removal cannot drop covered ones

layout(location = 0) flat in uint v_rect;

#if N_COLOUR > 0
layout(location = 0) out vec4 out0;
#endif
#if N_COLOUR > 1
layout(location = 1) out vec4 out1;
#endif
#if N_COLOUR > 2
layout(location = 2) out vec4 out2;
#endif
#if N_COLOUR > 3
layout(location = 3) out vec4 out3;
#endif
#if N_COLOUR > 4
layout(location = 4) out vec4 out4;
#endif
#if N_COLOUR > 5
layout(location = 5) out vec4 out5;
#endif
#if N_COLOUR > 6
layout(location = 6) out vec4 out6;
#endif
#if N_COLOUR > 7
layout(location = 7) out vec4 out7;
#endif

void write_all(vec4 c) {
#if N_COLOUR > 0
  out0 = c;
#endif
#if N_COLOUR > 1
  out1 = c;
#endif
#if N_COLOUR > 2
  out2 = c;
#endif
#if N_COLOUR > 3
  out3 = c;
#endif
#if N_COLOUR > 4
  out4 = c;
#endif
#if N_COLOUR > 5
  out5 = c;
#endif
#if N_COLOUR > 6
  out6 = c;
#endif
#if N_COLOUR > 7
  out7 = c;
#endif
}

// flat_colour() of graphics.cpp: each channel 0 or 1/255.
vec4 flat_colour(uint r) {
  const float s = 1.0 / 255.0;
  return vec4(s, float(r & 1u) * s, float((r >> 1) & 1u) * s, s);
}

#if defined(SHADING_TRACE)
layout(set = 0, binding = 0) coherent buffer Counter { uint counter; };
// field[(rectangle * cells_y + y / stride) * cells_x + x / stride], filled with 0xFFFFFFFF before the pass
layout(set = 0, binding = 1) buffer Field { uint field[]; };
layout(push_constant) uniform Args { uint stride; uint cells_x; uint cells_y; } args;
#elif defined(SHADING_TEXTURED)
layout(set = 0, binding = 0) uniform sampler2D tex;
#if defined(MAY_DISCARD)
layout(push_constant) uniform Args { uint size; uint samples; uint never; } args;
#else
layout(push_constant) uniform Args { uint size; uint samples; } args;
#endif
#elif defined(SHADING_FLAT) && defined(MAY_DISCARD)
layout(push_constant) uniform Args { uint never; } args;
#elif defined(SHADING_FRAME)
layout(push_constant) uniform Args { uint pattern; uint block_px; uint seed; } args;

// mix() of graphics.cpp, in uint arithmetic (wrapping multiplies, logical shifts).
uint mix_hash(uint seed, uint cx, uint cy) {
  uint h = seed * 0x9E3779B1u ^ cx * 0x85EBCA77u ^ cy * 0xC2B2AE3Du;
  h ^= h >> 16;
  h *= 0x7FEB352Du;
  h ^= h >> 15;
  h *= 0x846CA68Bu;
  h ^= h >> 16;
  return h;
}
#endif

void main() {
#if defined(MAY_DISCARD) && (defined(SHADING_FLAT) || defined(SHADING_TEXTURED))
  if (v_rect == args.never) discard;
#endif
#if defined(SHADING_FLAT)
  write_all(flat_colour(v_rect));
#elif defined(SHADING_TRACE)
  const uint t = atomicAdd(counter, 1u);
  const uvec2 p = uvec2(gl_FragCoord.xy);
  if (p.x % args.stride == 0u && p.y % args.stride == 0u)
    atomicMin(field[(v_rect * args.cells_y + p.y / args.stride) * args.cells_x + p.x / args.stride], t);
  write_all(flat_colour(v_rect));
#elif defined(SHADING_TEXTURED)
  // Sample k of pixel p reads around texel p + (5k, 3k) (wrapped: REPEAT):
  // point at its centre; the filtering modes between it and its +1
  // neighbours' centres, so every tap's weight is 1/2 along each axis.
  const ivec2 p = ivec2(gl_FragCoord.xy);
  const float inv = 1.0 / float(args.size);
  vec4 sum = vec4(0.0);
  for (uint k = 0u; k < args.samples; ++k) {
    const vec2 t = vec2(p + ivec2(5u * k, 3u * k));
#if TEX_MODE == 0
    sum += textureLod(tex, (t + 0.5) * inv, 0.0);
#elif TEX_MODE == 1
    sum += textureLod(tex, (t + 1.0) * inv, 0.0);
#elif TEX_MODE == 2
    sum += textureLod(tex, (t + 1.0) * inv, 0.5);  // halfway between levels 0 and 1
#else
    sum += textureGrad(tex, (t + 1.0) * inv, vec2(4.0 * inv, 0.0), vec2(0.0, inv));  // 4:1 footprint
#endif
  }
  write_all(sum / float(args.samples));
#elif defined(SHADING_FRAME)
  const uvec2 p = uvec2(gl_FragCoord.xy);
  uvec2 c = uvec2(0u);
  if (args.pattern == 1u) c = p / max(args.block_px, 1u);
  else if (args.pattern == 2u) c = p;
  write_all(unpackUnorm4x8(mix_hash(args.seed, c.x, c.y) | 0xFF000000u));
#endif
}
