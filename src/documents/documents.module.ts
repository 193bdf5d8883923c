import { Module } from '@nestjs/common';
import { DocumentsController } from './documents.controller';
import { DocumentsRepository } from './documents.repository';
import { DocumentsService } from './documents.service';
import { VectorLagMetrics } from './vector-lag.metrics';

@Module({
  controllers: [DocumentsController],
  providers: [DocumentsRepository, DocumentsService, VectorLagMetrics],
  exports: [DocumentsService],
})
export class DocumentsModule {}
