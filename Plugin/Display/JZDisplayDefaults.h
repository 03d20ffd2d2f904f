// Default views of the JZ-Tree outputs, in the GUI and in pvpython alike.
// The plugin initializer (paraview_add_plugin INITIALIZERS) installs an
// observer on every client session: when a representation of a JZ-Tree
// output is registered (the GUI's Apply, pvpython's Show()), it is
// configured from the table of JZDisplayTable.cxx. State files keep their
// own settings; JZTREE_DISPLAY_DEFAULTS=0 in the environment turns this off.
#ifndef JZDisplayDefaults_h
#define JZDisplayDefaults_h

/// The plugin initializer: installs the observer in client processes.
void jzInstallDisplayDefaults();

namespace jz_display
{
/// False when JZTREE_DISPLAY_DEFAULTS=0 (the GUI's part follows it too).
bool Enabled();
}

#endif
