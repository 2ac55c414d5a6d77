--- `:checkhealth rutter`
local M = {}

function M.check()
  local health = vim.health
  health.start("rutter")
  if vim.fn.has("nvim-0.11") == 1 then
    health.ok("Neovim " .. tostring(vim.version()))
  else
    health.error("Neovim 0.11 or newer is required (vim.lsp.config / vim.lsp.enable)")
  end
  local config = vim.lsp.config.rutter
  if not config then
    health.error("no `rutter` LSP config: is editors/neovim on 'runtimepath'?")
    return
  end
  local cmd = config.cmd
  if type(cmd) == "table" and cmd[1] then
    if vim.fn.executable(cmd[1]) == 1 then
      health.ok(("server command: %s (%s)"):format(table.concat(cmd, " "), vim.fn.exepath(cmd[1])))
    else
      health.error(
        ("`%s` is not executable"):format(cmd[1]),
        { "put rutter-lsp on PATH, or require('rutter').setup({ cmd = { '/path/to/rutter-lsp' } })" }
      )
    end
  end
  if vim.lsp.is_enabled and not vim.lsp.is_enabled("rutter") then
    health.warn("not enabled: call vim.lsp.enable('rutter') or require('rutter').setup()")
  else
    health.ok("enabled")
  end
  local agent = require("rutter.agents").current()
  health.info(("instruction float shows: %s (:RutterAgent to switch)"):format(
    require("rutter.agents_format").name(agent)
  ))
  local clients = vim.lsp.get_clients({ name = "rutter" })
  if #clients == 0 then
    health.info("no rutter client running (open a file inside a project)")
  end
  for _, client in ipairs(clients) do
    local folders = {}
    for _, folder in ipairs(client.workspace_folders or {}) do
      table.insert(folders, vim.uri_to_fname(folder.uri))
    end
    health.ok(("client %d serving %s"):format(client.id, table.concat(folders, ", ")))
    local rutter = require("rutter")
    if rutter.options.watch_files then
      local dirs = #require("rutter.watch").watched(client.id)
      health.ok(("client %d: watching %d director%s for live updates"):format(
        client.id,
        dirs,
        dirs == 1 and "y" or "ies"
      ))
    else
      health.info("watch_files = false: only saves in Neovim update the views")
    end
  end
end

return M
