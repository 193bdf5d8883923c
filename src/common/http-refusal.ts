import { HttpException } from '@nestjs/common';

/**
 * A REST refusal with its own error code, extra fields for the `{"error": {...}}` body and
 * headers (`WWW-Authenticate`, `Retry-After`): what the auth guard answers.
 */
export class HttpRefusal extends HttpException {
  constructor(
    status: number,
    readonly code: string,
    message: string,
    readonly headers: Readonly<Record<string, string>> = {},
    readonly details: Readonly<Record<string, unknown>> = {},
  ) {
    super(message, status);
  }
}
