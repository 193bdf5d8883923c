import { Injectable } from '@nestjs/common';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { AppConfig } from '../config/app-config';
import { type Profile } from '../config/config-values';
import { ApiKeyService, presentedCredential, type Principal } from './api-key.service';
import { profileOfPath } from './mcp-routes';
import { OAuthService } from './oauth.service';
import { API_KEY_CHALLENGE, ProtectedResources } from './protected-resource';

/**
 * Whether a request may use a profile, and if not what to answer. Each edge (MCP, REST)
 * words the refusal in its own shape; `challenge` is the `WWW-Authenticate` value.
 */
export type Admission =
  | { readonly kind: 'ok'; readonly principal: Principal }
  | { readonly kind: 'missing'; readonly challenge: string }
  /** `reason` is set for an access token (safe to show), absent for a wrong API key. */
  | { readonly kind: 'invalid'; readonly reason?: string; readonly challenge: string }
  /** Authenticated, but not for this profile; `scope` and `challenge` are set for a token. */
  | {
      readonly kind: 'forbidden';
      readonly principal: Principal;
      readonly scope?: string;
      readonly challenge?: string;
    }
  | { readonly kind: 'unavailable'; readonly reason: string };

const ADMISSION = Symbol('admission');

/**
 * API keys and, with `OAUTH_ISSUER`, OAuth access tokens (docs/mcp.md), both at once: a
 * value in `X-API-Key` is only ever a key; a `Bearer` value is a key if one matches, else
 * an access token.
 */
@Injectable()
export class Authenticator {
  readonly resources: ProtectedResources | undefined;

  constructor(
    private readonly keys: ApiKeyService,
    private readonly oauth: OAuthService,
    config: AppConfig,
  ) {
    this.resources = config.oauth ? new ProtectedResources(config.oauth) : undefined;
  }

  /**
   * {@link admit}, remembered on the request: the REST body middleware asks first (to read
   * no body for a stranger), the guard gets the same answer without a second token check.
   */
  admitOnce(
    request: IncomingMessage,
    profile: Profile,
    routePath: string | undefined,
  ): Promise<Admission> {
    const holder = request as IncomingMessage & { [ADMISSION]?: Promise<Admission> };
    holder[ADMISSION] ??= this.admit(request.headers, profile, routePath);
    return holder[ADMISSION];
  }

  /**
   * `routePath` is the MCP endpoint's path (`readonly/mcp`), `undefined` for the admin API:
   * it chooses the `resource_metadata` a challenge points to.
   */
  async admit(
    headers: IncomingHttpHeaders,
    profile: Profile,
    routePath: string | undefined,
  ): Promise<Admission> {
    const byKey = this.keys.authenticate(headers);
    if (byKey.outcome === 'ok') {
      return ApiKeyService.allows(byKey.principal, profile)
        ? { kind: 'ok', principal: byKey.principal }
        : { kind: 'forbidden', principal: byKey.principal };
    }
    const resources = this.resources;
    if (byKey.outcome === 'missing' || resources === undefined) {
      const challenge = resources?.challenge(profile, routePath) ?? API_KEY_CHALLENGE;
      return byKey.outcome === 'missing'
        ? { kind: 'missing', challenge }
        : { kind: 'invalid', challenge };
    }
    const credential = presentedCredential(headers);
    if (!credential?.bearer) {
      return { kind: 'invalid', challenge: resources.challenge(profile, routePath) };
    }
    const audiences = resources.audiences(
      routePath === undefined ? undefined : profileOfPath(routePath),
    );
    const check = await this.oauth.verify(credential.value, audiences);
    switch (check.outcome) {
      case 'unavailable':
        return { kind: 'unavailable', reason: check.reason };
      case 'invalid':
        return {
          kind: 'invalid',
          reason: check.reason,
          challenge: resources.challenge(profile, routePath, {
            code: 'invalid_token',
            description: check.reason,
          }),
        };
      case 'ok': {
        if (ApiKeyService.allows(check.principal, profile)) {
          return { kind: 'ok', principal: check.principal };
        }
        const scope = resources.scopesGranting(profile)[0];
        return {
          kind: 'forbidden',
          principal: check.principal,
          scope,
          challenge: resources.challenge(profile, routePath, {
            code: 'insufficient_scope',
            description: `the ${profile} profile needs the scope ${scope ?? '(none maps to it)'}`,
          }),
        };
      }
      default: {
        const unknown: never = check;
        throw new Error(`unknown token check ${String(unknown)}`);
      }
    }
  }
}
