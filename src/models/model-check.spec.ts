import { CHECK_TEXT, knownModel, KNOWN_MODELS } from './known-models';
import { compareFingerprint, FingerprintMismatch } from './model-check';

/**
 * The first eight values of CHECK_TEXT's vector (as a passage) from each model's files, as
 * this server's encoder gives them (Python onnxruntime and Rust tokenizers gave the same, to
 * 1e-7): langchain4j's 8-bit and 32-bit jars, and MiniLM's weight-only 8-bit export.
 */
const MEASURED = {
  'bge-small-en-v1.5': {
    '8-bit': [-0.0256, 0.0381, -0.0398, -0.0203, -0.0113, -0.0444, 0.0277, 0.01],
    '32-bit': [-0.0258, 0.0332, -0.0307, -0.0199, -0.0113, -0.0402, 0.0173, 0.0141],
  },
  'all-MiniLM-L6-v2': {
    '8-bit': [-0.0229, 0.0568, -0.0542, 0.0122, 0.0309, 0.044, 0.0147, 0.0266],
    '32-bit': [-0.0313, 0.0503, -0.0589, 0.0086, 0.0358, 0.0402, 0.0077, 0.026],
    'weight-only 8-bit': [-0.031, 0.0498, -0.0564, 0.0075, 0.0349, 0.0426, 0.0095, 0.0268],
  },
  'e5-small-v2': {
    '8-bit': [-0.0652, 0.0685, -0.0149, 0.0057, -0.0048, 0.0507, 0.0361, 0.0067],
    '32-bit': [-0.0626, 0.0657, -0.012, 0.0097, -0.0023, 0.0516, 0.0349, -0.0025],
  },
} as const;

const measured = Object.entries(MEASURED).flatMap(([name, files]) =>
  Object.entries(files).map(([kind, values]) => ({ name, kind, values })),
);

describe("a model's fingerprint: its files' vector of the check text", () => {
  it('is a short plain text', () => {
    expect(CHECK_TEXT.length).toBeLessThan(80);
  });

  it.each(measured)("matches $name's own files ($kind)", ({ name, values }) => {
    const comparison = compareFingerprint(knownModel(name)!.fingerprint!, values);
    expect(comparison.matches).toBe(true);
  });

  it.each(measured)("tells $name's files ($kind) from every other model's", ({ name, values }) => {
    for (const other of KNOWN_MODELS) {
      if (other.name === name || other.fingerprint === undefined) continue;
      const comparison = compareFingerprint(other.fingerprint, values);
      expect({ model: other.name, ...comparison }).toMatchObject({
        model: other.name,
        matches: false,
      });
      expect(comparison.cosine).toBeLessThan(0.8);
      expect(comparison.maxDifference).toBeGreaterThan(0.04);
    }
  });

  it('matches by cosine or by the largest difference, and by neither for opposite vectors', () => {
    const fingerprint = [0.05, -0.03, 0.02, 0.01];
    // Scaled: same direction (cosine 1), every value off by more than 0.02.
    expect(compareFingerprint(fingerprint, [0.5, -0.3, 0.2, 0.1])).toMatchObject({
      matches: true,
    });
    // Every value within 0.02, direction off (cosine 0.88).
    const near = compareFingerprint(fingerprint, [0.035, -0.015, 0.035, -0.005]);
    expect(near.cosine).toBeLessThan(0.99);
    expect(near.matches).toBe(true);
    const opposite = compareFingerprint(
      fingerprint,
      fingerprint.map((value) => -value),
    );
    expect(opposite).toMatchObject({ matches: false });
    expect(opposite.cosine).toBeCloseTo(-1, 6);
    expect(compareFingerprint(fingerprint, [0, 0, 0, 0])).toMatchObject({
      cosine: 0,
      matches: false,
    });
  });

  it('names the model, the cosine and the model the files are when it knows it', () => {
    const bge = knownModel('bge-small-en-v1.5')!;
    const e5 = knownModel('e5-small-v2')!;
    const comparison = compareFingerprint(bge.fingerprint!, MEASURED['e5-small-v2']['8-bit']);
    expect(new FingerprintMismatch(bge, comparison).message).toBe(
      `these files are not bge-small-en-v1.5: their embedding of the check text differs (cosine ${comparison.cosine.toFixed(2)})`,
    );
    // A model without a fingerprint: the files are told only by the model they are.
    expect(new FingerprintMismatch(bge, undefined, e5).detail).toBe(
      "they are e5-small-v2's files (`agent-data models add e5-small-v2 PATH` installs them as that)",
    );
    expect(new FingerprintMismatch(bge, comparison, e5).detail).toMatch(
      /differs \(cosine 0\.\d\d\); they are e5-small-v2's files \(`agent-data models add e5-small-v2 PATH` installs them as that\)$/,
    );
  });
});
