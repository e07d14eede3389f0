// Smallest real use of the installed headers: an f32 -> f16 -> f32 round trip of an exact value.
#include <infer/element.hpp>

int main() {
  const float x = 1.5f;
  const float y = infer::f16_to_f32(infer::f32_to_f16(x));
  return y == x ? 0 : 1;
}
