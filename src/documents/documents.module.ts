import { Module } from '@nestjs/common';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { AccessPolicyService } from './access-policy.service';
import { AnchorTextReader } from './anchor-texts';
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
import { LinkMoves } from './link-moves';
import { LinkResolver } from './link-resolver';
import { LinksPendingJob } from './links-pending.job';
import { LinksRepository } from './links.repository';
import { LinksController } from './links.controller';
import { LinksService } from './links.service';

@Module({
  imports: [IdempotencyModule],
  // LinksController first: its routes would otherwise be taken by `GET /documents/{id}`.
  controllers: [LinksController, DocumentsController],
  providers: [
    AnchorTextReader,
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
    LinkResolver,
    LinkMoves,
    LinksService,
    LinksPendingJob,
  ],
  exports: [
    DocumentsService,
    DocumentListingsService,
    AccessPolicyService,
    DocumentSources,
    DocumentChangesListener,
    LinksService,
    AnchorTextReader,
  ],
})
export class DocumentsModule {}
