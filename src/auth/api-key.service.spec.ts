import { loadConfig } from '../config/load-config';
import { ApiKeyService, LOCAL_PRINCIPAL, presentedKey } from './api-key.service';

const OPS_KEY = 'ops-secret-key-000000001';
const READER_KEY = 'reader-secret-key-000002';

describe('ApiKeyService', () => {
  const keys = new ApiKeyService(
    loadConfig({ API_KEYS: `ops:${OPS_KEY}:admin,internal;reader:${READER_KEY}:readonly` }),
  );

  it('lets everything through as "local" when API_KEYS is unset', () => {
    const open = new ApiKeyService(loadConfig({}));
    expect(open.enabled).toBe(false);
    expect(open.authenticate({})).toEqual({ outcome: 'ok', principal: LOCAL_PRINCIPAL });
    expect(ApiKeyService.allows(LOCAL_PRINCIPAL, 'admin')).toBe(true);
  });

  it('names the key that matched and its profiles', () => {
    const result = keys.authenticate({ 'x-api-key': READER_KEY });
    expect(result.outcome).toBe('ok');
    if (result.outcome !== 'ok') return;
    expect(result.principal.name).toBe('reader');
    expect(ApiKeyService.allows(result.principal, 'readonly')).toBe(true);
    expect(ApiKeyService.allows(result.principal, 'admin')).toBe(false);
  });

  it('takes the key from Authorization: Bearer too', () => {
    const result = keys.authenticate({ authorization: `Bearer ${OPS_KEY}` });
    expect(result).toMatchObject({ outcome: 'ok', principal: { name: 'ops' } });
  });

  it('tells a missing key from a wrong one', () => {
    expect(keys.authenticate({})).toEqual({ outcome: 'missing' });
    expect(keys.authenticate({ authorization: 'Basic b3BzOnNlY3JldA==' })).toEqual({
      outcome: 'missing',
    });
    expect(keys.authenticate({ 'x-api-key': `${OPS_KEY}x` })).toEqual({ outcome: 'invalid' });
    expect(keys.authenticate({ 'x-api-key': OPS_KEY.slice(0, -1) })).toEqual({
      outcome: 'invalid',
    });
    expect(keys.authenticate({ authorization: 'Bearer nope' })).toEqual({ outcome: 'invalid' });
  });

  it('answers alike for a key it has seen before, and still refuses its neighbours', () => {
    const fresh = new ApiKeyService(
      loadConfig({ API_KEYS: `ops:${OPS_KEY}:admin;reader:${READER_KEY}:readonly` }),
    );
    const first = fresh.authenticate({ 'x-api-key': OPS_KEY });
    expect(fresh.authenticate({ 'x-api-key': ` ${OPS_KEY} ` })).toEqual(first);
    expect(fresh.authenticate({ authorization: `Bearer ${OPS_KEY}` })).toEqual(first);
    expect(first).toMatchObject({ outcome: 'ok', principal: { name: 'ops' } });
    for (const near of [`${OPS_KEY}x`, OPS_KEY.slice(0, -1), OPS_KEY.toUpperCase(), READER_KEY]) {
      const result = fresh.authenticate({ 'x-api-key': near });
      expect(result.outcome === 'ok' ? result.principal.name : result.outcome).toBe(
        near === READER_KEY ? 'reader' : 'invalid',
      );
    }
    // Twice, in case the first answer was remembered.
    expect(fresh.authenticate({ 'x-api-key': `${OPS_KEY}x` })).toEqual({ outcome: 'invalid' });
  });
});

describe('presentedKey', () => {
  it('prefers X-API-Key, trims it, and falls back to a Bearer token', () => {
    expect(presentedKey({ 'x-api-key': ' k1 ', authorization: 'Bearer k2' })).toBe('k1');
    expect(presentedKey({ 'x-api-key': '  ', authorization: 'bearer k2' })).toBe('k2');
    expect(presentedKey({ 'x-api-key': ['k1', 'k3'] })).toBe('k1');
  });

  it('ignores other schemes and malformed Bearer values', () => {
    expect(presentedKey({})).toBeUndefined();
    expect(presentedKey({ authorization: 'Basic abc' })).toBeUndefined();
    expect(presentedKey({ authorization: 'Bearer' })).toBeUndefined();
    expect(presentedKey({ authorization: 'Bearer two words' })).toBeUndefined();
  });
});
