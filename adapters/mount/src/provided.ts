// The modules every compiled component may import: React, its JSX runtime, react-dom, and the
// standard gadget package. Declared gadget packages join them when a component imports one
// (module-loader.ts, gadget-bundles.ts).

import * as React from 'react';
import * as JsxRuntime from 'react/jsx-runtime';
import * as ReactDom from 'react-dom';
import * as Gadgets from './gadgets';
import { ActionButton } from './kit/action-button';
import { Chart } from './kit/chart';
import { DataTable } from './kit/data-table';
import { StatusBadge, statusTone } from './kit/status-badge';
import type { ProvidedModules } from './module-loader';

/** `@svc/gadgets`: the seven hooks and the kit's components, as `gadgets.d.ts` declares them
 * (`kit-types.ts` checks the two agree). */
export const gadgetExports = {
  useProps: Gadgets.useProps,
  useAction: Gadgets.useAction,
  useStream: Gadgets.useStream,
  useContextSlot: Gadgets.useContextSlot,
  useTheme: Gadgets.useTheme,
  useHostContext: Gadgets.useHostContext,
  useToolChannel: Gadgets.useToolChannel,
  ActionButton,
  Chart,
  DataTable,
  StatusBadge,
  statusTone,
};

export function providedModules(): ProvidedModules {
  const jsx = { ...JsxRuntime } as Record<string, unknown>;
  return {
    react: { ...React } as Record<string, unknown>,
    'react/jsx-runtime': jsx,
    // A development-mode transform asks for jsxDEV: mapped to jsx, whatever the runtime ships.
    'react/jsx-dev-runtime': { Fragment: JsxRuntime.Fragment, jsxDEV: (type: unknown, props: unknown, key: unknown) => (JsxRuntime.jsx as (...args: unknown[]) => unknown)(type, props, key) },
    'react-dom': { ...ReactDom } as Record<string, unknown>,
    '@svc/gadgets': gadgetExports,
  };
}
