// Compile-time only (`npm run check`): the runtime's `@svc/gadgets` exports agree with the
// served `gadgets.d.ts`, so a card typed against that file gets what it was typed against.

import type * as Declared from '@svc/gadgets';
import { gadgetExports } from './provided';

type Exports = typeof gadgetExports;
// Every declared export exists at runtime with a compatible type...
export const declaredMatchesRuntime: { [Name in keyof typeof Declared]: (typeof Declared)[Name] } = gadgetExports;
// ...and the runtime exports nothing the declaration leaves out.
export const runtimeIsDeclared: { [Name in keyof Exports]: Name extends keyof typeof Declared ? true : never } = {
  useProps: true,
  useAction: true,
  useStream: true,
  useContextSlot: true,
  useTheme: true,
  useHostContext: true,
  useToolChannel: true,
  ActionButton: true,
  Chart: true,
  DataTable: true,
  StatusBadge: true,
  statusTone: true,
};
