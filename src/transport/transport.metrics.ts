import { Injectable } from '@nestjs/common';
import { Counter } from 'prom-client';
import { MetricsService } from '../metrics/metrics.service';

/** How an MCP answer was framed: a JSON body, one SSE event, or no body (202, 204). */
export type Framing = 'json' | 'sse' | 'empty';

/** `mcp_responses_total{framing}`: every answer on an MCP route, errors included. */
@Injectable()
export class TransportMetrics {
  private readonly responses: Counter<'framing'>;

  constructor(metrics: MetricsService) {
    this.responses = new Counter({
      name: 'mcp_responses_total',
      help: 'Answers on MCP routes by framing (json, sse, empty)',
      labelNames: ['framing'] as const,
      registers: [metrics.registry],
    });
  }

  answered(framing: Framing): void {
    this.responses.inc({ framing });
  }
}
