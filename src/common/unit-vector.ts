/** Scales `vector` to unit length in place (a zero vector stays zero) and returns it. */
export function normalise(vector: Float32Array): Float32Array {
  let sum = 0;
  for (let i = 0; i < vector.length; i++) sum += vector[i] * vector[i];
  if (sum > 0) {
    const scale = 1 / Math.sqrt(sum);
    for (let i = 0; i < vector.length; i++) vector[i] *= scale;
  }
  return vector;
}
