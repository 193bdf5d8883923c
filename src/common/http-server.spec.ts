import type { AppConfig } from '../config/app-config';
import { type RouteHandler, TunedExpressAdapter } from './http-server';

describe('TunedExpressAdapter.routeHandler', () => {
  const adapter = () => new TunedExpressAdapter({} as AppConfig, () => undefined);
  const handler = (): RouteHandler => () => undefined;

  it('gives the first handler Nest registered for a method and path, the one Express answers with', () => {
    const routes = adapter();
    const [list, shadowed, all] = [handler(), handler(), handler()];
    routes.get('/documents', list);
    routes.get('/documents', shadowed);
    routes.all('/mcp', all);
    expect(routes.routeHandler('GET', '/documents')).toBe(list);
    expect(routes.routeHandler('ALL', '/mcp')).toBe(all);
    expect(routes.routeHandler('POST', '/documents')).toBeUndefined();
  });

  it('records no route when Nest reads an Express setting', () => {
    const routes = adapter();
    routes.get('etag');
    expect(routes.routeHandler('GET', 'etag')).toBeUndefined();
  });
});
