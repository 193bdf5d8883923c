import { move, transferableSymbol, valueSymbol } from 'piscina';
import { workerData } from 'node:worker_threads';
import { knownModel } from '../../models/known-models';
import { OnnxEncoder, type TextKind } from '../../models/onnx-encoder';

/** What a model thread is started with (see ModelThreads). */
export interface ModelThreadData {
  readonly model: string;
  readonly files: { readonly model: string; readonly tokenizer: string };
  /** ONNX Runtime's threads for one run. */
  readonly threads: number;
}

/** One task: texts to embed, or nothing (`texts` empty) to load the model and return. */
export interface ModelTask {
  readonly texts: readonly string[];
  readonly kind: TextKind;
}

const data = workerData as ModelThreadData;
let encoder: Promise<OnnxEncoder> | undefined;

/**
 * The entry of a model thread: loads the model on its first task (once), then embeds each
 * task's texts and hands the vectors back by transfer (their buffer moves, nothing is
 * copied). ONNX Runtime holds this thread while it runs, never the request loop.
 */
export default async function embed(task: ModelTask): Promise<unknown> {
  encoder ??= OnnxEncoder.open(data.files, knownModel(data.model)!, { threads: data.threads });
  const loaded = await encoder.catch((error: unknown) => {
    // A failed load is not remembered: the next task tries again (the files may be fixed).
    encoder = undefined;
    throw error;
  });
  if (task.texts.length === 0) return new Float32Array(0);
  const vectors = await loaded.encode(task.texts, task.kind);
  return move({
    get [transferableSymbol]() {
      return [vectors.buffer];
    },
    get [valueSymbol]() {
      return vectors;
    },
  });
}
