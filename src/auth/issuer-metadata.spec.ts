import { discoveryUrls } from './issuer-metadata';

describe('discoveryUrls', () => {
  it('asks the root of an issuer without a path for RFC 8414 first, then OpenID', () => {
    expect(discoveryUrls('https://tenant.auth0.com/')).toEqual([
      'https://tenant.auth0.com/.well-known/oauth-authorization-server',
      'https://tenant.auth0.com/.well-known/openid-configuration',
    ]);
  });

  it('inserts the path for an issuer with one, then appends it the OpenID way (Keycloak)', () => {
    expect(discoveryUrls('https://id.example.com/realms/kb')).toEqual([
      'https://id.example.com/.well-known/oauth-authorization-server/realms/kb',
      'https://id.example.com/.well-known/openid-configuration/realms/kb',
      'https://id.example.com/realms/kb/.well-known/openid-configuration',
    ]);
  });
});
