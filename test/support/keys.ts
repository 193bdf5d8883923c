/**
 * API keys for named callers, all with the same profiles: the `API_KEYS` setting that holds
 * them (`name:key:profiles`, docs/configuration.md) and the header each presents.
 */
export function namedKeys<Name extends string>(
  keys: Record<Name, string>,
  profiles = 'admin,internal',
): { apiKeys: string; as: (who: Name) => { 'X-API-Key': string } } {
  return {
    apiKeys: (Object.entries(keys) as Array<[Name, string]>)
      .map(([name, key]) => `${name}:${key}:${profiles}`)
      .join(';'),
    as: (who) => ({ 'X-API-Key': keys[who] }),
  };
}
