import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import { DataSource } from 'typeorm';
import { AppConfig } from '../../config/app-config';
import { isDatabaseUnavailable } from '../../database/database-errors';
import { AnchorTextReader } from '../../documents/anchor-texts';
import { AnchorFieldsRepository } from '../lexical/anchor-fields.repository';
import { anchorFieldOf, sameAnchorField } from '../lexical/lexical-record';
import { LEXICAL_MIRROR, type LexicalMirror } from '../lexical/lexical-side';
import { storeDown } from '../stores/vector-store.interface';

/** How often the queue is looked at when it was found empty. */
const EVERY_MS = 1_000;
/** Rows of the queue a step takes, and steps a run at most (then the next tick goes on). */
const BATCH = 50;
const STEPS_PER_RUN = 200;
/**
 * While the pipeline has documents waiting it goes first (a document's own words matter more
 * than what links say of it): the fields take one step every this many ticks meanwhile (so a
 * pipeline never idle still sees them move), and go at full speed once it is idle. Measured
 * (docs/performance.md, "Anchor fields"): beside a bulk load at full speed the pipeline indexed
 * 37 % slower at 50 000 documents, at a step a second 20 % slower.
 */
const TICKS_PER_STEP_WHILE_BUSY = 10;

/**
 * Keeps each document's anchor field (docs/search.md, "Anchor text") as the links say now.
 * The pipeline queues, as it writes lexical records, the written documents' own fields, the
 * links of those that link, and the names of the documents that came, went or were retitled
 * (`kb_anchors_due`); links read in the background queue theirs. A `name` row queues the
 * links that gave words to the documents of that name or title (they may resolve to the
 * newcomer now). A `source` row follows a document's links again: the documents they
 * give words to now and gave words to before get their fields read again. A `target` row
 * reads a document's field from the links pointing at it, writes it if it changed, and queues
 * the links of the documents that began or ceased to point at it. Each step only queues what
 * may have changed, so the queue empties. Every replica that runs the pipeline runs it; two at
 * once claim different rows.
 */
@Injectable()
export class AnchorFieldsJob {
  private readonly logger = new Logger('AnchorFields');
  private readonly repository: AnchorFieldsRepository;
  private running = false;
  private failureLogged = 0;
  /** Ticks since the last step taken while the pipeline was busy. */
  private busyTicks = 0;

  constructor(
    private readonly config: AppConfig,
    dataSource: DataSource,
    private readonly reader: AnchorTextReader,
    @Optional() @Inject(LEXICAL_MIRROR) private readonly mirror?: LexicalMirror | null,
  ) {
    this.repository = new AnchorFieldsRepository(dataSource);
  }

  @Interval('anchor-fields', EVERY_MS)
  async tick(): Promise<void> {
    // Part of the pipeline: where it does not run (VECTOR_SYNC_ENABLED=false), nor does this.
    if (this.running || !this.config.vectorSyncEnabled) return;
    this.running = true;
    try {
      await this.run();
    } catch (error) {
      if (isDatabaseUnavailable(error) || storeDown(error)) return;
      // Once a minute at most: the rows claimed are taken again once their claim ends.
      if (Date.now() - this.failureLogged >= 60_000) {
        this.failureLogged = Date.now();
        this.logger.warn(`reading anchor fields failed: ${String(error)}`);
      }
    } finally {
      this.running = false;
    }
  }

  /** Rows of the queue left to read (anchor fields and links to follow again). */
  due(): Promise<number> {
    return this.repository.due();
  }

  /** Steps until the queue is empty (or a run's worth); how many rows were taken. */
  async run(): Promise<number> {
    let taken = 0;
    for (let step = 0; step < STEPS_PER_RUN; step++) {
      if (await this.repository.pipelineBusy()) {
        if (step > 0 || ++this.busyTicks < TICKS_PER_STEP_WHILE_BUSY) break;
        this.busyTicks = 0;
      }
      const count = await this.step();
      taken += count;
      if (count === 0) break;
    }
    return taken;
  }

  /** One claim of the queue, read and written; how many rows it took. */
  async step(): Promise<number> {
    const claimed = await this.repository.claim(BATCH);
    if (claimed.length === 0) return 0;
    const ids = (kind: 'target' | 'source') =>
      claimed.filter((row) => row.kind === kind).map((row) => row.document_id);

    // A document that came or took a title may take over a link that gave words to a document
    // of its name or title: those links are followed again. One that went or gave up a title
    // may leave a link to one of its namesakes: the links by its keys from their folders are.
    // (Its own sources are followed by trigger, or by reading its field again.) Only namesakes
    // whose folder holds it matter: to be as near to a link as one of them, it must be in the
    // folder the link shares with that one, which holds the link (the field's own rule).
    const sourcesDue = new Set<string>();
    const names = claimed.filter((row) => row.kind === 'name');
    const now = await this.repository.titles(names.map((name) => name.document_id));
    const namesakes = new Set<string>();
    for (const name of names) {
      const others = await this.reader.namesakesOf(name.document_id, name.title);
      for (const id of others) namesakes.add(id);
      if (now.get(name.document_id) === name.title) continue;
      for (const id of await this.reader.linkersNear(name.document_id, name.title, others))
        sourcesDue.add(id);
    }
    for (const id of await this.repository.sourcesOfFields([...namesakes])) sourcesDue.add(id);

    const targetsDue = new Set<string>();
    for (const source of await this.repository.sources(ids('source'))) {
      const now =
        source.body === null ? [] : await this.reader.targetsOf(source.document_id, source.body);
      for (const id of [...now, ...source.targets]) targetsDue.add(id);
    }

    const changed: Array<{
      documentId: string;
      stamp: number;
      field: ReturnType<typeof anchorFieldOf>;
      sources: string[];
    }> = [];
    const targets = await this.repository.targets(ids('target'));
    const linked = await this.reader.mayBeLinked(targets);
    for (const target of targets) {
      // No link anywhere names it, and none gave it words before: nothing to read or write.
      if (!linked.has(target.document_id) && target.sources.length === 0) continue;
      const { labels, sources } = await this.reader.textsOf(target.document_id, target.title);
      const field = anchorFieldOf(labels);
      const before = new Set(target.sources);
      const now = new Set(sources);
      const moved = [
        ...sources.filter((id) => !before.has(id)),
        ...target.sources.filter((id) => !now.has(id)),
      ];
      for (const id of moved) sourcesDue.add(id);
      if (moved.length > 0 || !sameAnchorField(field, target.field)) {
        changed.push({
          documentId: target.document_id,
          stamp: target.stamp,
          field,
          sources: [...now],
        });
      }
    }
    // All at once: a step that fails leaves nothing half done, its rows to be taken again.
    await this.repository.finish(
      { fields: changed, targets: [...targetsDue], sources: [...sourcesDue], claimed },
      this.mirror,
    );
    return claimed.length;
  }
}
