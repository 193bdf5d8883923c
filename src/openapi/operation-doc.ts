import type { ParameterObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import type { z } from 'zod';
import type { ResponseSchemaName } from './openapi.schemas';

/** What the OpenAPI document says about one admin REST operation. */
export interface OperationDoc {
  readonly tag: 'Documents' | 'Search' | 'Vectors' | 'Sources' | 'Backup' | 'Operations';
  readonly summary: string;
  readonly description?: string;
  readonly parameters?: readonly ParameterObject[];
  /** The zod schema the controller validates the body with. */
  readonly body?: { readonly schema: z.ZodType; readonly required: boolean };
  /** A body of bytes rather than JSON (a backup): its media type. */
  readonly binaryBody?: { readonly mediaType: string; readonly description: string };
  /**
   * Successful answers: status → description and component schema (JSON unless `text`, or
   * `binary`: bytes of that media type).
   */
  readonly responses: Readonly<
    Record<
      number,
      { description: string; schema?: ResponseSchemaName; text?: boolean; binary?: string }
    >
  >;
  /** Error answers (body: the `Error` component): status → when it happens. */
  readonly errors?: Readonly<Record<number, string>>;
  /** Reachable without an API key (probes and scrapes). */
  readonly public?: true;
}

export const query = (name: string, description: string, schema: object, required = false) =>
  ({ name, in: 'query', required, description, schema }) as ParameterObject;

export const header = (name: string, description: string) =>
  ({
    name,
    in: 'header',
    required: false,
    description,
    schema: { type: 'string' },
  }) as ParameterObject;
