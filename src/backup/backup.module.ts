import { Module } from '@nestjs/common';
import { DocumentsModule } from '../documents/documents.module';
import { VectorsModule } from '../vectors/vectors.module';
import { BackupController } from './backup.controller';
import { BackupRepository } from './backup.repository';
import { BackupService } from './backup.service';

/**
 * Backups of what the knowledge base cannot derive again, and their restore into an empty
 * one (docs/operations.md): the documents with their history and audit trail, and the
 * sources. Restored documents are indexed lexically at once and embedded by the pipeline.
 */
@Module({
  imports: [DocumentsModule, VectorsModule],
  controllers: [BackupController],
  providers: [BackupRepository, BackupService],
})
export class BackupModule {}
