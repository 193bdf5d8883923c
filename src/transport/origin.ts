import { isLoopbackHost } from '../config/load-config';
import { httpUrl } from '../common/http-url';

/**
 * Whether a browser `Origin` may call the MCP routes (DNS-rebinding protection).
 * `allowed === undefined` (ALLOWED_ORIGINS unset) admits loopback origins only, on any
 * port. Entries are full origins (`https://app.example.com`); `http://localhost:*` admits
 * any port of that scheme and host; `*` admits every origin. Comparison is on the
 * serialised origin, so case and default ports do not matter.
 */
export function isOriginAllowed(origin: string, allowed: readonly string[] | undefined): boolean {
  const parsed = httpUrl(origin);
  if (allowed === undefined) {
    return parsed !== undefined && isLoopbackHost(parsed.hostname);
  }
  for (const entry of allowed) {
    if (entry === '*') return true;
    if (parsed === undefined) {
      if (entry.toLowerCase() === origin.toLowerCase()) return true;
      continue;
    }
    if (entry.endsWith(':*')) {
      const base = httpUrl(entry.slice(0, -2));
      if (base && base.protocol === parsed.protocol && base.hostname === parsed.hostname) {
        return true;
      }
    } else if (httpUrl(entry)?.origin === parsed.origin) {
      return true;
    }
  }
  return false;
}
