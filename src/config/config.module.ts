import { DynamicModule, Global, Module } from '@nestjs/common';
import { AppConfig } from './app-config';

/** Provides the one {@link AppConfig}, parsed before the application is built. */
@Global()
@Module({})
export class ConfigModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: ConfigModule,
      providers: [{ provide: AppConfig, useValue: config }],
      exports: [AppConfig],
    };
  }
}
