// Its own file, free of imports, so that the small parsers (database-location.ts) throw it
// without loading the server's whole configuration.

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
