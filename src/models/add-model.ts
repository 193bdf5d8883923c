import { mkdir, rm } from 'node:fs/promises';
import { resolve } from 'node:path';
import { knownModel, type KnownModel } from './known-models';
import { gatherModelFiles } from './model-source';
import {
  installModel,
  makeIncoming,
  ModelError,
  unknownModel,
  type InstalledModel,
} from './model-store';
import { OnnxEncoder } from './onnx-encoder';

/**
 * `agent-data models add NAME PATH`: installs the model `name` from the files found in
 * `source` (a folder or a zip archive, model-source.ts). The files are copied into a hidden
 * folder of `modelsDir`, loaded and run once as `name` (inputs, outputs, dimension), and only
 * then installed; whatever fails, nothing of them is left in `modelsDir`.
 */
export async function addModel(
  modelsDir: string,
  name: string,
  source: string,
  options: { threads: number },
): Promise<InstalledModel> {
  const model = knownModel(name);
  if (model === undefined) throw unknownModel(name);
  const from = resolve(source);
  await mkdir(modelsDir, { recursive: true });
  const incoming = await makeIncoming(modelsDir);
  try {
    const files = await gatherModelFiles(from, incoming);
    await checkModelFiles(files, model, options.threads, {
      [files.model]: files.names.model,
      [files.tokenizer]: files.names.tokenizer,
    }).catch((error: unknown) => {
      throw error instanceof ModelError
        ? new ModelError(`${from} does not hold ${model.name}: ${error.message}`)
        : error;
    });
    return await installModel(modelsDir, model, files, from, { move: true });
  } finally {
    await rm(incoming, { recursive: true, force: true });
  }
}

/**
 * Loads `files` as `model` and embeds one text (OnnxEncoder.open does), then lets them go. A
 * ModelError says what is wrong, with the files named as `names` maps them (ONNX Runtime's
 * messages give the path it was handed, a hidden folder the user never saw).
 */
export async function checkModelFiles(
  files: { readonly model: string; readonly tokenizer: string },
  model: KnownModel,
  threads: number,
  names: Readonly<Record<string, string>>,
): Promise<void> {
  let encoder: OnnxEncoder;
  try {
    encoder = await OnnxEncoder.open(files, model, { threads });
  } catch (error) {
    if (!(error instanceof ModelError)) throw error;
    let message = error.message;
    for (const [path, name] of Object.entries(names)) message = message.split(path).join(name);
    throw new ModelError(message);
  }
  await encoder.close();
}
