import type { DataSource, EntityManager } from 'typeorm';
import { tryAdvisoryLock } from '../../../database/advisory-lock';
import type { LsaModel } from '../../semantic/lsa';
import {
  MODEL_COLUMNS,
  MODEL_HEAD_COLUMNS,
  modelColumns,
  modelOfParts,
  type ModelHead,
  VECTOR_PARTS,
  vectorPartsFrom,
} from '../../semantic/semantic-model.repository';
import { ANALYZER_VERSION } from '../../text/analyzer';
import type { SemanticSlot } from './qdrant-collection';

/** A slot of the collection's semantic vectors: which model, and whether it is searched. */
export interface SlotRow {
  readonly slot: SemanticSlot;
  readonly state: 'active' | 'building';
  readonly modelId: string;
  /** Documents the knowledge base held when the model was learnt. */
  readonly learntAt: number;
}

type Query = (text: string, values?: unknown[]) => Promise<unknown[]>;

/**
 * The latent-semantic models whose document vectors a Qdrant collection holds
 * (`kb_qdrant_semantic`: at most one `active`, searched, and one `building`, being written),
 * and the lock that keeps a model from becoming the searched one, or a new one from being
 * given a slot, while a writer of documents' vectors is in a transaction: writers take it
 * shared, the slot's changes exclusively (a PostgreSQL advisory lock named by the collection).
 */
export class QdrantSemanticRepository {
  constructor(
    private readonly dataSource: DataSource,
    private readonly collection: string,
  ) {}

  /** The slots, read inside a writer's transaction after taking the lock shared. */
  async slotsForWriting(manager: EntityManager): Promise<SlotRow[]> {
    await manager.query(`SELECT pg_advisory_xact_lock_shared(hashtext($1))`, [this.lockName]);
    return this.slots((text, values) => manager.query(text, values));
  }

  /** The slots as they are now. */
  slotsNow(): Promise<SlotRow[]> {
    return this.slots((text, values) => this.dataSource.query(text, values));
  }

  private async slots(query: Query): Promise<SlotRow[]> {
    const rows = (await query(
      `SELECT slot, state, model_id, learnt_at FROM kb_qdrant_semantic
        WHERE collection = $1 AND analyzer = $2`,
      [this.collection, ANALYZER_VERSION],
    )) as Array<{
      slot: SemanticSlot;
      state: SlotRow['state'];
      model_id: string;
      learnt_at: number;
    }>;
    return rows.map((row) => ({
      slot: row.slot,
      state: row.state,
      modelId: row.model_id,
      learntAt: row.learnt_at,
    }));
  }

  /** A slot's model, whole; `undefined` when it is gone (replaced meanwhile) or not whole. */
  async model(slot: SemanticSlot, modelId: string): Promise<LsaModel | undefined> {
    const where = `WHERE collection = $1 AND slot = $2 AND model_id = $3`;
    const rows: ModelHead[] = await this.dataSource.query(
      `SELECT ${MODEL_HEAD_COLUMNS} FROM kb_qdrant_semantic ${where}`,
      [this.collection, slot, modelId],
    );
    if (rows[0] === undefined) return undefined;
    return modelOfParts(modelId, rows[0], (from) =>
      this.dataSource.query(
        `SELECT ${VECTOR_PARTS} FROM kb_qdrant_semantic ${vectorPartsFrom('$4')} ${where} ORDER BY at`,
        [this.collection, slot, modelId, from],
      ),
    );
  }

  /**
   * Gives a model the slot that is not searched, as `building` (replacing a model left there
   * by a learner that stopped), once no writer is in a transaction: every transaction after
   * this one writes its vectors too.
   */
  async build(slot: SemanticSlot, model: LsaModel, learntAt: number): Promise<void> {
    await this.exclusively(async (manager) => {
      await manager.query(`DELETE FROM kb_qdrant_semantic WHERE collection = $1 AND slot = $2`, [
        this.collection,
        slot,
      ]);
      await manager.query(
        `DELETE FROM kb_qdrant_semantic WHERE collection = $1 AND state = 'building'`,
        [this.collection],
      );
      await manager.query(
        `INSERT INTO kb_qdrant_semantic
                (collection, slot, state, analyzer, model_id, learnt_at, ${MODEL_COLUMNS})
         VALUES ($1, $2, 'building', $3, $4, $5, $6, $7, $8, $9, $10)`,
        [this.collection, slot, ANALYZER_VERSION, model.id, learntAt, ...modelColumns(model)],
      );
    });
  }

  /**
   * Records that the searched model `modelId` was found as good as a new one at `learntAt`
   * documents (semantic-training.ts, `stillCurrent`): the count rules start from there.
   */
  async confirm(slot: SemanticSlot, modelId: string, learntAt: number): Promise<void> {
    await this.dataSource.query(
      `UPDATE kb_qdrant_semantic SET learnt_at = $4
        WHERE collection = $1 AND slot = $2 AND model_id = $3 AND state = 'active'`,
      [this.collection, slot, modelId, learntAt],
    );
  }

  /** Forgets every model of the collection (their vectors are being dropped from its points). */
  async forgetModels(): Promise<void> {
    await this.exclusively((manager) =>
      manager.query(`DELETE FROM kb_qdrant_semantic WHERE collection = $1`, [this.collection]),
    );
  }

  /**
   * Makes the building model the searched one and forgets the one it replaces, once no
   * writer is in a transaction. False when the building model is not `modelId` any more.
   */
  async activate(slot: SemanticSlot, modelId: string): Promise<boolean> {
    return this.exclusively(async (manager) => {
      const building: unknown[] = await manager.query(
        `SELECT 1 FROM kb_qdrant_semantic
          WHERE collection = $1 AND slot = $2 AND model_id = $3 AND state = 'building'`,
        [this.collection, slot, modelId],
      );
      if (building.length === 0) return false;
      // The model it replaces goes first: one model is searched at a time.
      await manager.query(`DELETE FROM kb_qdrant_semantic WHERE collection = $1 AND slot <> $2`, [
        this.collection,
        slot,
      ]);
      await manager.query(
        `UPDATE kb_qdrant_semantic SET state = 'active', saved_at = now()
          WHERE collection = $1 AND slot = $2`,
        [this.collection, slot],
      );
      return true;
    });
  }

  /**
   * The learner's lock, held by one server at a time on a connection of its own while it
   * learns and writes a model: what releases it, or `undefined` when another server holds it.
   */
  tryLearning(): Promise<(() => Promise<void>) | undefined> {
    return tryAdvisoryLock(this.dataSource, `${this.lockName}:learner`);
  }

  private exclusively<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(async (manager) => {
      await manager.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [this.lockName]);
      return work(manager);
    });
  }

  private get lockName(): string {
    return `kb_qdrant_semantic:${this.collection}`;
  }
}
