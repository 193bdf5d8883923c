import { isIP } from 'node:net';
import { DomainError, ErrorCode, invalidArgument } from '../common/domain-error';
import { AddressPolicy } from './address-policy';

/**
 * Where ingest_document may fetch from: hosts on the allow-list (`docs.example.com`, or
 * `*.example.com` for its subdomains), over https (http only when allowed), never with
 * credentials in the URL, and never to an address {@link AddressPolicy} refuses.
 *
 * A web source reads the URLs its operator declared, so it is given a policy for any host
 * (`allowedHosts` of `'any'`): the rules of scheme, credentials and addresses stay.
 */
export class UrlPolicy {
  private readonly exact = new Set<string>();
  private readonly suffixes: string[] = [];
  private readonly anyHost: boolean;

  constructor(
    allowedHosts: readonly string[] | 'any',
    private readonly allowHttp: boolean,
    readonly addresses: AddressPolicy,
  ) {
    this.anyHost = allowedHosts === 'any';
    for (const entry of allowedHosts === 'any' ? [] : allowedHosts) {
      if (entry.startsWith('*.')) this.suffixes.push(`.${canonicalHost(entry.slice(2))}`);
      else this.exact.add(canonicalHost(entry));
    }
  }

  get enabled(): boolean {
    return this.anyHost || this.exact.size + this.suffixes.length > 0;
  }

  /**
   * Parses and checks one URL (the first one, and every redirect target). Host names are
   * compared in the WHATWG URL parser's canonical form, so `http://2130706433/`,
   * `http://0177.0.0.1/` and `http://127.1/` all read as 127.0.0.1; an IP-literal host is
   * checked here, a name after DNS resolution (see SafeFetcher).
   */
  check(raw: string | URL, field = 'url'): URL {
    if (!this.enabled) {
      throw forbidden('ingest_document is disabled on this server: INGEST_ALLOWED_HOSTS is empty');
    }
    let url: URL;
    try {
      url = typeof raw === 'string' ? new URL(raw) : raw;
    } catch {
      throw invalidArgument(field, 'must be an absolute http(s) URL');
    }
    if (url.protocol !== 'https:' && !(url.protocol === 'http:' && this.allowHttp)) {
      throw forbidden(
        `${url.protocol} URLs are not allowed: use https${url.protocol === 'http:' ? ' (this server does not allow plain http)' : ''}`,
      );
    }
    if (url.username !== '' || url.password !== '') {
      throw forbidden('URLs with credentials (user:password@) are not allowed');
    }
    const host = bareHost(url.hostname);
    if (!this.hostAllowed(host)) {
      throw forbidden(`host ${host} is not on this server's ingest allow-list`);
    }
    if (isIP(host) !== 0) {
      const refusal = this.addresses.refusal(host);
      if (refusal) throw forbidden(`refused: ${refusal}`);
    }
    return url;
  }

  private hostAllowed(host: string): boolean {
    return (
      this.anyHost || this.exact.has(host) || this.suffixes.some((suffix) => host.endsWith(suffix))
    );
  }
}

export function forbidden(message: string): DomainError {
  return new DomainError(ErrorCode.FORBIDDEN_URL, message);
}

/** A URL hostname without IPv6 brackets or a trailing root dot. */
function bareHost(hostname: string): string {
  return hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '');
}

/** An allow-list entry in the URL parser's canonical form (lower case, punycode, IPs normalised). */
function canonicalHost(entry: string): string {
  const host = entry.trim().toLowerCase();
  try {
    return bareHost(new URL(`http://${isIP(host) === 6 ? `[${host}]` : host}`).hostname);
  } catch {
    return bareHost(host);
  }
}
