import { join } from 'node:path';
import { KNOWN_MODELS, type KnownModel } from './known-models';
import {
  listFolders,
  MODEL_FILE,
  TOKENIZER_FILE,
  verifyInstalled,
  type InstalledModel,
} from './model-store';
import { OnnxEncoder } from './onnx-encoder';

/** A folder of MODELS_DIR as `agent-data models list` shows it. */
export interface ModelEntry {
  readonly name: string;
  /** Whether the server can use it: installed whole (sizes as the manifest gives them). */
  readonly usable: boolean;
  /** What is wrong with it when it is not usable ("damaged (…)", "installed incompletely (…)"). */
  readonly problem?: string;
  readonly bytes?: number;
  readonly dimensions?: number;
  /** The URL or the path it was installed from. */
  readonly source?: string;
  readonly installed_at?: string;
  /** With `--check`: whether its files still are those installed, load and embed a text. */
  readonly check?: { readonly loads: boolean; readonly error?: string };
}

/** A known model that is not installed, and what it is. */
export interface AvailableModel {
  readonly name: string;
  readonly dimensions: number;
  readonly languages: KnownModel['languages'];
  readonly licence: string;
}

/**
 * The folders of `modelsDir` (`check`: each usable one verified against its manifest's
 * SHA-256, loaded and run), and the known models none of them holds.
 */
export async function modelsOverview(
  modelsDir: string,
  options: { check: boolean; threads: number },
): Promise<{ installed: ModelEntry[]; available: AvailableModel[] }> {
  const installed: ModelEntry[] = [];
  // One at a time: each check loads a model (some 100 MB of memory while it runs).
  for (const folder of await listFolders(modelsDir)) {
    if (folder.installed === undefined) {
      installed.push({ name: folder.name, usable: false, problem: folder.problem });
      continue;
    }
    const { manifest, bytes, model } = folder.installed;
    installed.push({
      name: folder.name,
      usable: true,
      bytes,
      dimensions: model.dimensions,
      source: manifest.source,
      installed_at: manifest.installed_at,
      ...(options.check ? { check: await check(folder.installed, options.threads) } : {}),
    });
  }
  const names = new Set(installed.filter((entry) => entry.usable).map((entry) => entry.name));
  const available = KNOWN_MODELS.filter((model) => !names.has(model.name)).map((model) => ({
    name: model.name,
    dimensions: model.dimensions,
    languages: model.languages,
    licence: model.licence,
  }));
  return { installed, available };
}

async function check(
  installed: InstalledModel,
  threads: number,
): Promise<{ loads: boolean; error?: string }> {
  try {
    await verifyInstalled(installed);
    const files = {
      model: join(installed.dir, MODEL_FILE),
      tokenizer: join(installed.dir, TOKENIZER_FILE),
    };
    const encoder = await OnnxEncoder.open(files, installed.model, { threads });
    try {
      await encoder.encode(['How are installed models checked?'], 'query');
    } finally {
      await encoder.close();
    }
    return { loads: true };
  } catch (error) {
    // Whatever stops it is the answer for this model; the others are still checked.
    const message = error instanceof Error ? error.message : String(error);
    return { loads: false, error: message.split('\n')[0] };
  }
}
