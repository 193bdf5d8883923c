import type { Request } from 'express';

/** What this module reads of Express's router: its layers, those of routes with their methods. */
interface RouterLayer {
  readonly route?: { readonly methods: Readonly<Record<string, boolean>> };
  match(path: string): unknown;
}

/**
 * The methods the application's routes answer at the request's path, for a `405 Method Not
 * Allowed` and its `Allow` header (RFC 9110) instead of a 404 that would say the resource is
 * not there: `TRACE /documents` is a method this path lacks, not a path this server lacks.
 * Empty when no route has the path. HEAD goes with GET, as Express answers it.
 */
export function allowedMethods(request: Request): string[] {
  const router = (request.app as unknown as { router?: { stack?: readonly RouterLayer[] } }).router;
  const methods = new Set<string>();
  for (const layer of router?.stack ?? []) {
    if (layer.route === undefined) continue;
    let matched: unknown;
    try {
      matched = layer.match(request.path);
    } catch {
      // A path whose percent-encoding does not decode matches no route's parameters.
      continue;
    }
    // A route that takes the request's own method and still let it through is middleware
    // (the JSON body parser is mounted on every method of these paths), not an endpoint.
    if (!matched || layer.route.methods[request.method.toLowerCase()]) continue;
    for (const [method, on] of Object.entries(layer.route.methods)) {
      if (on && method !== '_all') methods.add(method.toUpperCase());
    }
  }
  if (methods.has('GET')) methods.add('HEAD');
  return [...methods].sort();
}
