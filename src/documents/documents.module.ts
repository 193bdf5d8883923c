import { Module } from '@nestjs/common';
import { DocumentListingsRepository } from './document-listings.repository';
import { DocumentsController } from './documents.controller';
import { DocumentsRepository } from './documents.repository';
import { DocumentsService } from './documents.service';

@Module({
  controllers: [DocumentsController],
  providers: [DocumentsRepository, DocumentListingsRepository, DocumentsService],
  exports: [DocumentsService],
})
export class DocumentsModule {}
