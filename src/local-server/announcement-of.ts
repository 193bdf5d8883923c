import type { AppConfig } from '../config/app-config';
import { SERVER_VERSION } from '../common/version';
import { databaseIdentity, reachableUrl, type ServerAnnouncement } from './server-announcement';

/** What a server of `config`, listening on `port`, announces in DATA_DIR. */
export function announcementOf(
  config: AppConfig,
  port: number,
): Omit<ServerAnnouncement, 'pid' | 'started_at'> {
  const token = config.localAgentToken;
  if (token === undefined) throw new Error('a server announces itself with its local agent token');
  return {
    url: reachableUrl(config.host, port),
    version: SERVER_VERSION,
    database: databaseIdentity(config.databaseUrl, token),
    local_token: token,
  };
}
