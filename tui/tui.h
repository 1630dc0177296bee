/* The explorer TUI's one public entry: `npu-explore MODEL [options]` opens it (app/cli.c declares
 * the same prototype; nothing includes tui/). Headless options (--tui-script, --tui-size,
 * --tui-dump, --tui-stable) drive it from a key script and write the screens as text. */
#ifndef NPU_TUI_H
#define NPU_TUI_H

int tui_main(int argc, char **argv);

#endif
