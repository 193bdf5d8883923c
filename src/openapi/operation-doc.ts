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
      {
        description: string;
        schema?: ResponseSchemaName;
        text?: boolean;
        binary?: string;
        /**
         * Operations the answer leads to (OpenAPI links): the created resource read, changed
         * and deleted by the id in the answer. Clients and a stateful fuzzer follow them.
         */
        links?: Readonly<Record<string, ResponseLink>>;
      }
    >
  >;
  /** Error answers (body: the `Error` component): status → when it happens. */
  readonly errors?: Readonly<Record<number, string>>;
  /** Reachable without an API key (probes and scrapes). */
  readonly public?: true;
  /**
   * A write that takes `Idempotency-Key` (docs/documents.md, "Retrying writes safely"): the
   * header, the `Idempotent-Replayed` answer header and the 409 and 422 it may answer are
   * added to what the entry says.
   */
  readonly idempotent?: true;
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

/** An OpenAPI link: an operation of this document and its parameters from the answer. */
export interface ResponseLink {
  readonly operationId: string;
  readonly parameters: Readonly<Record<string, string>>;
  readonly description?: string;
}

/** Links from an answer whose body names a resource's `field` to the operations on `{id}`. */
export function linksById(
  field: string,
  operations: Readonly<Record<string, string>>,
): Record<string, ResponseLink> {
  return Object.fromEntries(
    Object.entries(operations).map(([name, operationId]) => [
      name,
      { operationId, parameters: { id: `$response.body#/${field}` } },
    ]),
  );
}
