import type { ServerResponse } from 'node:http';
import type { RequestObserver, RoutedRequest } from '../common/http-server';
import { MetricsService } from './metrics.service';

/**
 * Times every request. The route label is the matched route's template (`/documents/*id`),
 * never the raw path, so ids and tokens never become label values.
 */
export function httpMetrics(metrics: MetricsService): RequestObserver {
  return (request: RoutedRequest, response: ServerResponse): void => {
    const end = metrics.httpDuration.startTimer();
    response.once('finish', () => {
      const template = request.route?.path;
      const route = typeof template === 'string' ? `${request.baseUrl}${template}` : 'unmatched';
      end({ method: request.method, route, status: String(response.statusCode) });
    });
  };
}
