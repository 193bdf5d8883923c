import { Controller, Get, NotFoundException, Param, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { type ConsoleFile, ConsoleFiles } from './console-files';
import { ConsoleSignInSettings } from './console-sign-in';

/**
 * The page's Content-Security-Policy: scripts and styles from this origin only (no inline
 * script, no style attribute), nothing loaded from elsewhere, calls to this origin and to
 * the issuer's token endpoint when the console signs in there, no framing.
 */
function contentSecurityPolicy(connectOrigins: readonly string[]): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    `connect-src ${["'self'", ...connectOrigins].join(' ')}`,
    "font-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** What every console answer carries besides its CSP. */
const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
};

/**
 * The operator console (docs/console.md) at `/console`: a page and its two hashed assets.
 * Public like any static page; everything it shows comes from the admin API with the key
 * the user signs in with.
 */
@ApiExcludeController()
@Controller('console')
export class ConsoleController {
  constructor(
    private readonly files: ConsoleFiles,
    private readonly signIn: ConsoleSignInSettings,
  ) {}

  @Get()
  async index(@Req() request: Request, @Res() response: Response): Promise<void> {
    // The assets are addressed relative to /console/: send /console there first (the
    // query too: an issuer comes back with ?code=…&state=…).
    if (!request.path.endsWith('/')) {
      const query = request.originalUrl.indexOf('?');
      response.redirect(301, `/console/${query === -1 ? '' : request.originalUrl.slice(query)}`);
      return;
    }
    send(response, this.files.index, 'no-cache', await this.signIn.connectOrigins());
  }

  /** How to sign in: API keys, and the issuer when `CONSOLE_OAUTH_CLIENT_ID` is set. */
  @Get('config.json')
  async config(@Res() response: Response): Promise<void> {
    const body = Buffer.from(JSON.stringify(await this.signIn.current()));
    send(response, { bytes: body, type: 'application/json; charset=utf-8' }, 'no-cache', []);
  }

  @Get('assets/:name')
  asset(@Param('name') name: string, @Res() response: Response): void {
    // Named by their content's hash: a name never changes meaning.
    send(response, this.files.asset(name), 'public, max-age=31536000, immutable', []);
  }
}

function send(
  response: Response,
  file: ConsoleFile | undefined,
  cacheControl: string,
  connectOrigins: readonly string[],
): void {
  if (file === undefined) {
    throw new NotFoundException(
      'no such console file (is the console built? npm run build writes it into dist/console)',
    );
  }
  response.set(SECURITY_HEADERS);
  response.set({
    'Content-Security-Policy': contentSecurityPolicy(connectOrigins),
    'Content-Type': file.type,
    'Cache-Control': cacheControl,
  });
  response.status(200).end(file.bytes);
}
