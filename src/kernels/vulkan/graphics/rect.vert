// Full-screen rectangles for the graphics facet (src/kernels/vulkan/README.md,
// "Graphics shaders"): drawn as vkCmdDraw(3, rects, 0, 0), instance i is
// rectangle i, one triangle whose clipped part is the whole viewport (no
// edge crosses or touches the screen, so every tile is wholly inside the
// primitive, as the rasteriser's fast path for covered tiles takes it, and
// no quad along a diagonal shades twice). Rectangle i lies
// at depth ((i & 255) + 1) / 256, exact in float, so a depth attachment
// holds the last rectangle's depth after a pass (depth test ALWAYS).

layout(location = 0) flat out uint v_rect;

void main() {
  const vec2 corners[3] = vec2[3](vec2(-1.0, -1.0), vec2(4.0, -1.0), vec2(-1.0, 4.0));
  const uint rect = uint(gl_InstanceIndex);
  v_rect = rect;
  gl_Position = vec4(corners[gl_VertexIndex], float((rect & 255u) + 1u) / 256.0, 1.0);
}
