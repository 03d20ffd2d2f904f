// pqJZDisplayBehavior: the GUI's part of the default views (Plugin/Display,
// doc/ARCHITECTURE.md, "Default views"). The looks themselves are set at the server-manager
// level for the GUI and pvpython alike; after an Apply this tidies what only
// the GUI does on its own: it keeps the render view active when the halo
// catalogue opened in a new spreadsheet beside it, fits the camera when the
// new outputs are all that is visible, and hides colour legends of more
// categories than a legend can show.
#ifndef pqJZDisplayBehavior_h
#define pqJZDisplayBehavior_h

#include <QList>
#include <QObject>
#include <QPointer>

class pqDataRepresentation;
class pqRepresentation;

class pqJZDisplayBehavior : public QObject
{
  Q_OBJECT
  typedef QObject Superclass;

public:
  pqJZDisplayBehavior(QObject* parent = nullptr);
  ~pqJZDisplayBehavior() override;

  /// pqAutoStartInterface hooks.
  void startup();
  void shutdown() {}

private Q_SLOTS:
  void representationAdded(pqRepresentation* repr);
  void tidy();

private:
  QList<QPointer<pqDataRepresentation>> Added;
};

#endif
