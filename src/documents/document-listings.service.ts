import { Injectable } from '@nestjs/common';
import { invalidArgument } from '../common/domain-error';
import { prefixUpperBound, validateFolder, validatePrefix } from './document-id';
import {
  type DocumentPage,
  FOLDER_TREE_MAX_FOLDERS,
  type FolderTree,
  type ListResult,
} from './document.schemas';
import { summaryFromRow } from './document-rows';
import { DocumentListingsRepository } from './document-listings.repository';
import { FolderCountsRepository } from './folder-counts.repository';
import type { Access } from './access';

export const LIST_DEFAULT_LIMIT = 50;
export const LIST_MAX_LIMIT = 100;

/** Completion candidates for an argument, and whether more than these exist. */
export interface Completions {
  values: string[];
  more: boolean;
}

/**
 * Reads of many documents: pages by offset and by cursor, completions of ids and folders,
 * the folder tree. Each reads only what a caller may read, as ranges of the id index: under
 * an access policy the readable part of a prefix is its readable folders (grants are whole
 * folders), each one range, walked in byte order; so no read scans past documents it may not
 * show (a policy granting one folder of 50 among a million reads those 50), and no statement
 * filters rows after reading them.
 */
@Injectable()
export class DocumentListingsService {
  constructor(
    private readonly listings: DocumentListingsRepository,
    private readonly folderCounts: FolderCountsRepository,
  ) {}

  /** A page of the alive documents under `prefix` that `access` may read, in byte order of id. */
  async list(
    query: { prefix?: string; limit?: number; offset?: number },
    access: Access,
  ): Promise<ListResult> {
    const prefix = validatePrefix(query.prefix);
    const limit = query.limit ?? LIST_DEFAULT_LIMIT;
    const offset = query.offset ?? 0;
    if (!Number.isInteger(limit) || limit < 1 || limit > LIST_MAX_LIMIT) {
      throw invalidArgument(
        'limit',
        `must be an integer from 1 to ${LIST_MAX_LIMIT}, got ${limit}`,
      );
    }
    if (!Number.isInteger(offset) || offset < 0 || offset > 2_147_483_647) {
      throw invalidArgument('offset', `must be an integer ≥ 0, got ${offset}`);
    }
    const rows = await this.pageOf(access.readablePrefixes(prefix), limit + 1, offset);
    const truncated = rows.length > limit;
    const items = rows.slice(0, limit).map(summaryFromRow);
    return {
      items,
      count: items.length,
      returned_count: items.length,
      limit,
      offset,
      next_offset: truncated ? offset + items.length : null,
      truncated,
    };
  }

  /**
   * Up to `limit` alive documents after the id `after` (from the start when absent), in byte
   * order of id, and whether more follow: keyset pagination, for listings whose position is
   * an opaque cursor rather than an offset.
   */
  async pageAfter(after: string | undefined, limit: number, access: Access): Promise<DocumentPage> {
    const want = limit + 1;
    const rows: Awaited<ReturnType<DocumentListingsRepository['pageAfter']>> = [];
    for (const range of access.readablePrefixes('')) {
      const upper = prefixUpperBound(range);
      if (after !== undefined && upper !== null && bytewise(upper, after) <= 0) continue;
      rows.push(...(await this.listings.pageAfter(after ?? null, range, want - rows.length)));
      if (rows.length >= want) break;
    }
    return { items: rows.slice(0, limit), more: rows.length > limit };
  }

  /** Alive ids starting with `prefix`, at most `limit`, in byte order (for completions). */
  async completeIds(prefix: string, limit: number, access: Access): Promise<Completions> {
    const want = limit + 1;
    const values: string[] = [];
    for (const range of access.readablePrefixes(validatePrefix(prefix, 'value'))) {
      values.push(...(await this.listings.idsWithPrefix(range, want - values.length)));
      if (values.length >= want) break;
    }
    return { values: values.slice(0, limit), more: values.length > limit };
  }

  /**
   * Folders (id prefixes, without their trailing "/") that extend `prefix` by at most one
   * segment, at most `limit` (for completions): "kb/re" → "kb/reports", "kb/research".
   */
  async completeFolders(prefix: string, limit: number, access: Access): Promise<Completions> {
    const values = await this.foldersUnder(validatePrefix(prefix, 'value'), limit + 1, access);
    return { values: values.slice(0, limit), more: values.length > limit };
  }

  /**
   * The folder tree, a level at a time: the subfolders of `parent` (the root when absent)
   * that hold a document `access` may read, the first {@link FOLDER_TREE_MAX_FOLDERS} in
   * byte order, each with how many such documents its whole subtree holds, and how many lie
   * directly in `parent`. Nothing outside the read grants is named or counted.
   */
  async folderTree(parent: string | undefined, access: Access): Promise<FolderTree> {
    const prefix = validateFolder(parent, 'parent');
    const listed = prefix === '' ? null : prefix.slice(0, -1);
    const names = await this.foldersUnder(prefix, FOLDER_TREE_MAX_FOLDERS + 1, access);
    const shown = names.slice(0, FOLDER_TREE_MAX_FOLDERS);
    // What each listed folder counts: itself when all of it is readable, else the readable
    // folders under it (grants are whole folders, so theirs are exact counts too). The
    // documents directly in `parent` are readable only when all of it is.
    const parts = shown.map((folder) => grantsIn(access, `${folder}/`));
    const whole = access.readableUnder(prefix) === 'all';
    const counts = await this.folderCounts.counts([
      ...(whole ? [listed ?? ''] : []),
      ...parts.flat(),
    ]);
    const subtree = (folder: string) => counts.get(folder)?.subtree ?? 0;
    return {
      parent: listed,
      documents_here: whole ? (counts.get(listed ?? '')?.here ?? 0) : 0,
      // A folder emptied between the two statements is not shown with nothing in it.
      folders: shown
        .map((folder, i) => ({
          folder,
          documents: parts[i].reduce((sum, part) => sum + subtree(part), 0),
        }))
        .filter((folder) => folder.documents > 0),
      truncated: names.length > FOLDER_TREE_MAX_FOLDERS,
    };
  }

  /**
   * At most `want` rows of the ranges `prefixes` (in byte order) after skipping `offset`:
   * whole ranges are skipped by their counts (a folder's count row), the rest read in order.
   */
  private async pageOf(prefixes: readonly string[], want: number, offset: number) {
    if (prefixes.length === 1) return this.listings.list(prefixes[0], want - 1, offset);
    const rows: Awaited<ReturnType<DocumentListingsRepository['list']>> = [];
    const counts = offset > 0 ? await this.folderCounts.counts(prefixes.map(folderOf)) : undefined;
    let skip = offset;
    for (const range of prefixes) {
      const held = counts?.get(folderOf(range))?.subtree ?? 0;
      if (skip > 0 && skip >= held) {
        skip -= held;
        continue;
      }
      rows.push(...(await this.listings.list(range, want - rows.length - 1, skip)));
      skip = 0;
      if (rows.length >= want) break;
    }
    return rows;
  }

  /**
   * The folders extending `prefix` by one segment that hold a document `access` may read, at
   * most `want`, in byte order of `folder/`. All of it readable: a skip scan of the folder
   * index. Otherwise the readable folders under it name them: each grant's folder one
   * segment below `prefix`, if the grant holds an alive document (its count row).
   */
  private async foldersUnder(prefix: string, want: number, access: Access): Promise<string[]> {
    const readable = access.readableUnder(prefix);
    if (readable === 'all') return this.listings.foldersWithPrefix(prefix, want);
    if (readable.length === 0) return [];
    const counts = await this.folderCounts.counts(readable.map(folderOf));
    const found = new Set<string>();
    for (const grant of readable) {
      if ((counts.get(folderOf(grant))?.subtree ?? 0) === 0) continue;
      const end = grant.indexOf('/', prefix.length);
      found.add(grant.slice(0, end));
    }
    return [...found].sort((a, b) => bytewise(`${a}/`, `${b}/`)).slice(0, want);
  }
}

/** The folders `access` reads under `folder` (ending in `/`), as the counts name them. */
function grantsIn(access: Access, folder: string): string[] {
  const under = access.readableUnder(folder);
  return under === 'all' ? [folderOf(folder)] : under.map(folderOf);
}

/** A folder prefix without its trailing `/`. */
function folderOf(prefix: string): string {
  return prefix.endsWith('/') ? prefix.slice(0, -1) : prefix;
}

/** Strings compared as their UTF-8 bytes, as PostgreSQL's "C" collation orders ids. */
export function bytewise(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}
