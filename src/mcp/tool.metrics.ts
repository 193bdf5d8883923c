import { Injectable } from '@nestjs/common';
import { Counter, Histogram } from 'prom-client';
import { MetricsService } from '../metrics/metrics.service';
import type { ToolName } from './profiles';
import type { McpProfile } from '../auth/mcp-routes';

/**
 * `mcp_tool_calls_total{profile,tool,outcome}` and `mcp_tool_duration_seconds{profile,tool}`.
 * Only known tool names become label values (an unknown name is refused before it is
 * counted), and outcomes are a fixed set: `ok`, a lower-cased error code,
 * `internal_error`, `not_allowed`.
 */
@Injectable()
export class ToolMetrics {
  private readonly calls: Counter<'profile' | 'tool' | 'outcome'>;
  private readonly duration: Histogram<'profile' | 'tool'>;

  constructor(metrics: MetricsService) {
    this.calls = new Counter({
      name: 'mcp_tool_calls_total',
      help: 'MCP tool calls by profile, tool and outcome',
      labelNames: ['profile', 'tool', 'outcome'] as const,
      registers: [metrics.registry],
    });
    this.duration = new Histogram({
      name: 'mcp_tool_duration_seconds',
      help: 'MCP tool call duration by profile and tool',
      labelNames: ['profile', 'tool'] as const,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 15],
      registers: [metrics.registry],
    });
  }

  record(profile: McpProfile, tool: ToolName, outcome: string, seconds?: number): void {
    this.calls.inc({ profile, tool, outcome });
    if (seconds !== undefined) this.duration.observe({ profile, tool }, seconds);
  }
}
