import { Logger } from '@nestjs/common';
import type { FactoryProvider } from '@nestjs/common';
import { AppConfig } from './app-config';
import {
  LOCAL_VECTOR_WEIGHTS,
  MODEL_VECTOR_WEIGHTS,
  OPENAI_VECTOR_WEIGHTS,
  type VectorWeights,
} from './variables';
import { knownModel, type KnownModel } from '../models/known-models';
import { listFolders, readInstalled, type InstalledModel } from '../models/model-store';

/**
 * Documents the knowledge base holds before the latent-semantic model is learnt (the lexical
 * store's SEMANTIC_MIN_DOCUMENTS, which embeddings-choice.spec.ts holds this to): said here,
 * where the choice is made before any document is counted.
 */
export const LSA_MIN_DOCUMENTS = 50;

/** The model suggested when none is installed: the strongest of the known small ones. */
export const SUGGESTED_MODEL = 'bge-small-en-v1.5';

/**
 * Which embedder this process runs, decided once at start from the configuration and what
 * is installed under MODELS_DIR, with the reason (the start-up log says both):
 *
 * - `openai`: an OpenAI-compatible server (EMBEDDINGS_PROVIDER=openai, or OPENAI_API_KEY set);
 * - `model`: an embedding model run in this process on ONNX Runtime, named by
 *   EMBEDDINGS_MODEL, or the only one installed when none is named;
 * - `hashing`: no model: hashed vectors, and the latent-semantic model learnt from the
 *   documents as the vector side of search (LOCAL_SEMANTIC).
 *
 * A named model that is not installed whole stops the start (ModelError, naming the command
 * that installs it).
 */
export class EmbeddingsChoice {
  private constructor(
    readonly kind: 'openai' | 'model' | 'hashing',
    readonly reason: string,
    /**
     * The share of the vector side in hybrid search for each kind of query
     * (SEARCH_VECTOR_WEIGHT for all, or this embedder's own).
     */
    readonly vectorWeights: VectorWeights,
    /** With `model`: the installed model. */
    readonly installed?: InstalledModel,
    /** With `openai`: the model's description when it is one this server knows (its prefixes). */
    readonly known?: KnownModel,
  ) {}

  /** Whether the vector side ranks by the latent-semantic model (hashing and LOCAL_SEMANTIC=lsa). */
  lsa(config: AppConfig): boolean {
    return this.kind === 'hashing' && config.localSemantic === 'lsa';
  }

  static async choose(config: AppConfig): Promise<EmbeddingsChoice> {
    const given = config.searchVectorWeight;
    const weight = (own: VectorWeights): VectorWeights =>
      given === undefined
        ? own
        : { keywords: given, sentences: given, codeSentences: given, fixed: true };
    if (config.embeddingsProvider === 'openai') {
      const model = config.embeddingsModel!;
      return new EmbeddingsChoice(
        'openai',
        `${model} on ${config.openaiBaseUrl ?? 'OpenAI'}`,
        weight(OPENAI_VECTOR_WEIGHTS),
        undefined,
        knownModel(model),
      );
    }
    if (config.embeddingsModel !== undefined) {
      const installed = await readInstalled(config.modelsDir, config.embeddingsModel);
      return new EmbeddingsChoice(
        'model',
        `${installed.model.name} (EMBEDDINGS_MODEL), from ${installed.dir}`,
        weight(MODEL_VECTOR_WEIGHTS),
        installed,
      );
    }
    const folders = await listFolders(config.modelsDir);
    const installed = folders.flatMap((folder) => (folder.installed ? [folder.installed] : []));
    const broken = folders
      .filter((folder) => folder.problem !== undefined)
      .map((folder) => `${folder.name}: ${folder.problem}`);
    const aside = broken.length === 0 ? '' : ` (not usable: ${broken.join('; ')})`;
    if (installed.length === 1) {
      return new EmbeddingsChoice(
        'model',
        `${installed[0].model.name}, the one model installed in ${config.modelsDir}${aside}`,
        weight(MODEL_VECTOR_WEIGHTS),
        installed[0],
      );
    }
    const why =
      installed.length === 0
        ? `no embedding model is installed in ${config.modelsDir}${aside}; \`agent-data models pull ${SUGGESTED_MODEL}\` installs one that understands questions in other words`
        : `${installed.length} models are installed in ${config.modelsDir} (${installed.map((i) => i.model.name).join(', ')}): set EMBEDDINGS_MODEL to the one to use`;
    const ranking =
      config.localSemantic === 'lsa'
        ? `the latent-semantic model, learnt from the documents once the knowledge base holds ${LSA_MIN_DOCUMENTS} (hashed vectors until then)`
        : 'hashed vectors (LOCAL_SEMANTIC=off)';
    return new EmbeddingsChoice('hashing', `${ranking}: ${why}`, weight(LOCAL_VECTOR_WEIGHTS));
  }
}

export const embeddingsChoiceProvider: FactoryProvider<Promise<EmbeddingsChoice>> = {
  provide: EmbeddingsChoice,
  inject: [AppConfig],
  useFactory: async (config: AppConfig) => {
    const choice = await EmbeddingsChoice.choose(config);
    new Logger('Embeddings').log(choice.reason);
    return choice;
  },
};
