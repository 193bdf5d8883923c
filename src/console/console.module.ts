import { Module } from '@nestjs/common';
import { ConsoleController } from './console.controller';
import { ConsoleFiles } from './console-files';
import { ConsoleSignInSettings } from './console-sign-in';

/** The operator console's page and assets (docs/console.md). */
@Module({ controllers: [ConsoleController], providers: [ConsoleFiles, ConsoleSignInSettings] })
export class ConsoleModule {}
