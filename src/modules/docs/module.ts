import { fileURLToPath } from 'node:url'
import type { ServiceModule } from '../module.js'
import { registerDocs, type DocsOptions } from './routes.js'

/** The repository's guides folder, `docs/guides`. */
export const DEFAULT_GUIDES_DIR = fileURLToPath(new URL('../../../docs/guides/', import.meta.url))

/**
 * The landing page, the rendered API reference, the Markdown guides and the error catalogue (`/`, `/docs…`).
 * `guidesDir` names another folder of guides (a test's own). The guides name the server by its `BASE_URL`.
 */
export function createDocsModule(
  options: Partial<Pick<DocsOptions, 'guidesDir'>> = {},
): ServiceModule {
  const guidesDir = options.guidesDir ?? DEFAULT_GUIDES_DIR
  return {
    name: 'docs',
    routes: (app, deps) => registerDocs(app, { guidesDir, baseUrl: deps.config.baseUrl }),
  }
}

export const docsModule: ServiceModule = createDocsModule()
