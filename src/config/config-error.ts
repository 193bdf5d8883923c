/** Profiles an API key or a scope may grant. `admin` grants the REST API; the others are MCP endpoints. */
export const PROFILES = ['internal', 'readonly', 'gpt', 'gpt-full', 'admin'] as const;
export type Profile = (typeof PROFILES)[number];

/** A bad configuration value: the message names the variable and what is wrong. */
export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`${variable}: ${problem}`);
    this.name = 'ConfigError';
  }
}
