/**
 * Just enough of curl's command line to replay the documented examples without curl: the
 * flags they use (-s -S -N -i -X -H -d), shell quoting ('…', "…" with $VAR, \ newlines),
 * and curl's defaults (`Accept: *\/*`, POST with a form Content-Type when -d is given).
 */
export interface CurlRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string | undefined;
  /** The arguments as a shell would pass them to curl. */
  argv: string[];
}

export function parseCurl(command: string, env: Record<string, string> = {}): CurlRequest {
  const argv = shellWords(command, env);
  if (argv[0] !== 'curl') throw new Error(`not a curl command: ${command}`);
  let url: string | undefined;
  let method: string | undefined;
  let body: string | undefined;
  const headers: Record<string, string> = {};
  for (let i = 1; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '-H' || arg === '--header') {
      const [name, ...value] = argv[++i].split(':');
      headers[name.trim()] = value.join(':').trim();
    } else if (arg === '-d' || arg === '--data' || arg === '--data-raw') {
      body = argv[++i];
    } else if (arg === '-X' || arg === '--request') {
      method = argv[++i];
    } else if (/^-[sSNi]+$/.test(arg)) {
      // output flags: no effect on the request
    } else if (arg.startsWith('-')) {
      throw new Error(`unsupported curl flag ${arg}`);
    } else {
      url = arg;
    }
  }
  if (!url) throw new Error(`no URL in ${command}`);
  const has = (name: string) => Object.keys(headers).some((h) => h.toLowerCase() === name);
  if (!has('accept')) headers.Accept = '*/*';
  if (body !== undefined && !has('content-type')) {
    headers['Content-Type'] = 'application/x-www-form-urlencoded';
  }
  return {
    url,
    method: method ?? (body === undefined ? 'GET' : 'POST'),
    headers,
    body,
    argv: argv.slice(1),
  };
}

/** POSIX-shell word splitting for the quoting the examples use. */
function shellWords(command: string, env: Record<string, string>): string[] {
  const words: string[] = [];
  let word: string | undefined;
  const text = command.replace(/\\\n/g, ' ');
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "'") {
      const end = text.indexOf("'", i + 1);
      word = (word ?? '') + text.slice(i + 1, end);
      i = end;
    } else if (c === '"') {
      const end = text.indexOf('"', i + 1);
      const inner = text.slice(i + 1, end).replace(/\$([A-Z_][A-Z0-9_]*)/g, (_m, name: string) => {
        if (!(name in env)) throw new Error(`$${name} is not set`);
        return env[name];
      });
      word = (word ?? '') + inner;
      i = end;
    } else if (/\s/.test(c)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else {
      word = (word ?? '') + c;
    }
  }
  if (word !== undefined) words.push(word);
  return words;
}
