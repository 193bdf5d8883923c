import { Injectable } from '@nestjs/common';
import { OAuthService } from '../auth/oauth.service';
import { AppConfig } from '../config/app-config';

/** How the console may sign in, as `/console/config.json` tells it. */
export interface ConsoleSignIn {
  /** Sign-in through the issuer (authorization code with PKCE), or `null`: API keys only. */
  readonly oauth: {
    readonly issuer: string;
    readonly client_id: string;
    /** The scope that grants the admin profile (OAUTH_SCOPE_PROFILES). */
    readonly scope: string;
    /** The resource indicator tokens are asked for (RFC 8707). */
    readonly resource: string;
    readonly authorization_endpoint: string;
    readonly token_endpoint: string;
  } | null;
  /** Why OAuth sign-in is offered but cannot be used now, if so. */
  readonly problem?: string;
}

/**
 * The console's sign-in settings: with `CONSOLE_OAUTH_CLIENT_ID` (and `OAUTH_ISSUER`), the
 * issuer's endpoints from its metadata, the scope granting the admin profile and this
 * server's resource identifier; the page's Content-Security-Policy then lets it reach the
 * token endpoint, and nothing else outside this origin.
 */
@Injectable()
export class ConsoleSignInSettings {
  constructor(
    private readonly config: AppConfig,
    private readonly oauth: OAuthService,
  ) {}

  async current(): Promise<ConsoleSignIn> {
    const settings = this.config.oauth;
    if (settings?.consoleClientId === undefined) return { oauth: null };
    const scope = [...settings.scopeProfiles].find(([, profiles]) => profiles.has('admin'))?.[0];
    if (scope === undefined) {
      return { oauth: null, problem: 'no scope in OAUTH_SCOPE_PROFILES grants the admin profile' };
    }
    try {
      const metadata = await this.oauth.issuerMetadata();
      if (metadata.authorizationEndpoint === undefined || metadata.tokenEndpoint === undefined) {
        return {
          oauth: null,
          problem: "the issuer's metadata names no authorization or token endpoint",
        };
      }
      return {
        oauth: {
          issuer: settings.issuer,
          client_id: settings.consoleClientId,
          scope,
          resource: settings.resource,
          authorization_endpoint: metadata.authorizationEndpoint,
          token_endpoint: metadata.tokenEndpoint,
        },
      };
    } catch {
      return { oauth: null, problem: 'the sign-in service does not answer now; try again later' };
    }
  }

  /** Origins the console's scripts may call besides its own: the token endpoint's. */
  async connectOrigins(): Promise<string[]> {
    const { oauth } = await this.current();
    return oauth === null ? [] : [new URL(oauth.token_endpoint).origin];
  }
}
