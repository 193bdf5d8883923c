import { CHECK_TEXT, KNOWN_MODELS, type KnownModel } from './known-models';
import { ModelError } from './model-store';
import { OnnxEncoder } from './onnx-encoder';

/**
 * How files given as a model are told to be that model before they are installed. Loading
 * them and running one text proves they are a text encoder of the model's dimension; only
 * their vector of a known text proves which one: bge-small-en-v1.5, all-MiniLM-L6-v2 and
 * e5-small-v2 all load, run and give 384 values.
 */

/**
 * A fingerprint matches when the cosine of the two is at least this, or no value is further
 * than MAX_DIFFERENCE from its own. 8-bit files give the model's vector of the check text
 * within 0.011 of the 32-bit one (cosine of the first eight values 0.989 for bge and MiniLM,
 * 0.995 for e5); the known models' fingerprints are at least 0.042 apart, cosine at most 0.77.
 */
export const MIN_COSINE = 0.99;
export const MAX_DIFFERENCE = 0.02;

/** How the vector files give the check text compares with a model's fingerprint. */
export interface FingerprintComparison {
  readonly cosine: number;
  readonly maxDifference: number;
  readonly matches: boolean;
}

/** `vector`'s first values against `fingerprint` (as long as the fingerprint). */
export function compareFingerprint(
  fingerprint: readonly number[],
  vector: ArrayLike<number>,
): FingerprintComparison {
  let dot = 0;
  let expected = 0;
  let given = 0;
  let maxDifference = 0;
  for (const [i, value] of fingerprint.entries()) {
    const other = vector[i] ?? 0;
    dot += value * other;
    expected += value * value;
    given += other * other;
    maxDifference = Math.max(maxDifference, Math.abs(value - other));
  }
  const cosine = expected > 0 && given > 0 ? dot / Math.sqrt(expected * given) : 0;
  return {
    cosine,
    maxDifference,
    matches: cosine >= MIN_COSINE || maxDifference <= MAX_DIFFERENCE,
  };
}

/**
 * Files that load and run as `model` but are another model's: `detail` says how they differ
 * from its fingerprint (`comparison`, when it has one), and which known model they are when
 * they match one (`actually`; at least one of the two is given).
 */
export class FingerprintMismatch extends ModelError {
  constructor(
    readonly model: KnownModel,
    readonly comparison: FingerprintComparison | undefined,
    readonly actually?: KnownModel,
  ) {
    super(`these files are not ${model.name}: ${mismatchDetail(comparison, actually)}`);
    this.name = 'FingerprintMismatch';
  }

  /** What is wrong, without naming the model again (for messages that already name it). */
  get detail(): string {
    return mismatchDetail(this.comparison, this.actually);
  }
}

function mismatchDetail(
  comparison: FingerprintComparison | undefined,
  actually: KnownModel | undefined,
): string {
  const parts = [
    comparison &&
      `their embedding of the check text differs (cosine ${comparison.cosine.toFixed(2)})`,
    actually &&
      `they are ${actually.name}'s files (\`agent-data models add ${actually.name} PATH\` installs them as that)`,
  ];
  return parts.filter(Boolean).join('; ');
}

/** How `checkModelFiles` told the files are the model's. */
export type ModelCheck = 'fingerprint' | 'dimensions';

/**
 * Loads `files` as `model`, embeds one text (OnnxEncoder.open does) and, when the model has a
 * fingerprint, the check text, then lets them go. Resolves with how they were told to be the
 * model's. A ModelError says what is wrong (a FingerprintMismatch: they are another model's),
 * with the files named as `names` maps them (ONNX Runtime's messages give the path it was
 * handed, a hidden folder the user never saw).
 */
export async function checkModelFiles(
  files: { readonly model: string; readonly tokenizer: string },
  model: KnownModel,
  threads: number,
  names: Readonly<Record<string, string>>,
): Promise<ModelCheck> {
  let encoder: OnnxEncoder;
  try {
    encoder = await OnnxEncoder.open(files, model, { threads });
  } catch (error) {
    if (!(error instanceof ModelError)) throw error;
    let message = error.message;
    for (const [path, name] of Object.entries(names)) message = message.split(path).join(name);
    throw new ModelError(message);
  }
  try {
    if (model.fingerprint === undefined) {
      // Nothing to compare them with; but they may be recognisably another model's.
      const actually = await whichModel(encoder, model);
      if (actually !== undefined) throw new FingerprintMismatch(model, undefined, actually);
      return 'dimensions';
    }
    const comparison = await compareWith(encoder, model);
    if (comparison.matches) return 'fingerprint';
    throw new FingerprintMismatch(model, comparison, await whichModel(encoder, model));
  } finally {
    await encoder.close();
  }
}

async function compareWith(
  encoder: OnnxEncoder,
  model: KnownModel,
): Promise<FingerprintComparison> {
  const vector = await encoder.as(model).encode([CHECK_TEXT], 'passage');
  return compareFingerprint(model.fingerprint!, vector);
}

/** The known model other than `not` whose fingerprint the files give, run as it. */
async function whichModel(encoder: OnnxEncoder, not: KnownModel): Promise<KnownModel | undefined> {
  for (const other of KNOWN_MODELS) {
    if (other === not || other.fingerprint === undefined) continue;
    if (other.dimensions !== not.dimensions) continue;
    if ((await compareWith(encoder, other)).matches) return other;
  }
  return undefined;
}
