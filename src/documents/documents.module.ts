import { Module } from '@nestjs/common';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { AccessPolicyService } from './access-policy.service';
import { ChangeFeedRepository } from './change-feed.repository';
import { ChangeFeedService } from './change-feed.service';
import { DocumentChangesListener } from './document-changes.listener';
import { DocumentListingsRepository } from './document-listings.repository';
import { DocumentListingsService } from './document-listings.service';
import { DocumentSources } from './document-sources';
import { DocumentsController } from './documents.controller';
import { DocumentsRepository } from './documents.repository';
import { DocumentsService } from './documents.service';
import { FolderCountsRepository } from './folder-counts.repository';
import { LinksPendingJob } from './links-pending.job';
import { LinksRepository } from './links.repository';

@Module({
  imports: [IdempotencyModule],
  controllers: [DocumentsController],
  providers: [
    DocumentsRepository,
    DocumentListingsRepository,
    FolderCountsRepository,
    DocumentsService,
    DocumentListingsService,
    ChangeFeedRepository,
    ChangeFeedService,
    AccessPolicyService,
    DocumentSources,
    DocumentChangesListener,
    LinksRepository,
    LinksPendingJob,
  ],
  exports: [
    DocumentsService,
    DocumentListingsService,
    AccessPolicyService,
    DocumentSources,
    DocumentChangesListener,
  ],
})
export class DocumentsModule {}
