import { mkdir, rm } from 'node:fs/promises';
import { resolve } from 'node:path';
import { knownModel } from './known-models';
import { checkModelFiles, FingerprintMismatch, type ModelCheck } from './model-check';
import { gatherModelFiles } from './model-source';
import {
  installModel,
  makeIncoming,
  ModelError,
  unknownModel,
  type InstalledModel,
  type ReplacedInstall,
} from './model-store';

/** What `agent-data models add` did. */
export interface AddReport {
  readonly installed: InstalledModel;
  /** The install it replaced, when the model was installed already. */
  readonly replaced?: ReplacedInstall;
  /** How the files were told to be the model's: its fingerprint, or their vectors' length only. */
  readonly check: ModelCheck;
}

/**
 * `agent-data models add NAME PATH`: installs the model `name` from the files found in
 * `source` (a folder or a zip archive, model-source.ts). The files are copied into a hidden
 * folder of `modelsDir`, loaded and run once as `name` (inputs, outputs, dimension, and its
 * vector of the check text: model-check.ts), and only then installed; whatever fails, nothing
 * of them is left in `modelsDir`.
 */
export async function addModel(
  modelsDir: string,
  name: string,
  source: string,
  options: { threads: number },
): Promise<AddReport> {
  const model = knownModel(name);
  if (model === undefined) throw unknownModel(name);
  const from = resolve(source);
  await mkdir(modelsDir, { recursive: true });
  const incoming = await makeIncoming(modelsDir);
  try {
    const files = await gatherModelFiles(from, incoming);
    const check = await checkModelFiles(files, model, options.threads, {
      [files.model]: files.names.model,
      [files.tokenizer]: files.names.tokenizer,
    }).catch((error: unknown) => {
      if (error instanceof FingerprintMismatch) {
        throw new ModelError(`the files in ${from} are not ${model.name}: ${error.detail}`);
      }
      throw error instanceof ModelError
        ? new ModelError(`${from} does not hold ${model.name}: ${error.message}`)
        : error;
    });
    const done = await installModel(modelsDir, model, files, from, { move: true });
    return { ...done, check };
  } finally {
    await rm(incoming, { recursive: true, force: true });
  }
}
