<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="de">
<context>
    <name>A11y</name>
    <message>
        <source>Clear {0}</source>
        <translation>{0} leeren</translation>
    </message>
</context>
<context>
    <name>BoardModel</name>
    <message>
        <source>Queue</source>
        <translation>Warteschlange</translation>
    </message>
    <message>
        <source>Item</source>
        <translation>Eintrag</translation>
    </message>
    <message>
        <source>Summary</source>
        <translation>Zusammenfassung</translation>
    </message>
    <message>
        <source>Holder</source>
        <translation>Gesperrt von</translation>
    </message>
    <message>
        <source>Claimed at</source>
        <translation>Übernommen</translation>
    </message>
    <message>
        <source>Age</source>
        <translation>Alter</translation>
    </message>
    <message>
        <source>Time left</source>
        <translation>Restzeit</translation>
    </message>
    <message>
        <source>Idle</source>
        <translation>Inaktiv</translation>
    </message>
    <message>
        <source>Extended</source>
        <translation>Verlängert</translation>
    </message>
    <message>
        <source>Due</source>
        <translation>Fällig</translation>
    </message>
    <message>
        <source>expires {0}; last saved or extended {1}</source>
        <translation>läuft ab {0}; zuletzt gespeichert oder verlängert {1}</translation>
    </message>
    <message>
        <source>expired {0} ago</source>
        <translation>−{0}</translation>
    </message>
    <message>
        <source>{0} (another program)</source>
        <translation>{0} (anderes Programm)</translation>
    </message>
    <message>
        <source>Held by another program under the name {0} since {1}: workbench did not take this lock and does not hand the item out before it expires ({2}). Force release frees it now, with a reason kept in the item&apos;s history; do so only when that program no longer works on it.</source>
        <translation>Von einem anderen Programm unter dem Namen {0} gesperrt, seit {1}: workbench hat diese Sperre nicht gesetzt und gibt den Eintrag nicht heraus, bevor sie abläuft ({2}). Die Zwangsfreigabe gibt ihn sofort frei, mit einem Grund im Verlauf des Eintrags; nur verwenden, wenn jenes Programm nicht mehr daran arbeitet.</translation>
    </message>
    <message>
        <source>(s)</source>
        <translation>(s)</translation>
    </message>
</context>
<context>
    <name>ChartsPanel</name>
    <message>
        <source>Chart: claimed and completed per hour</source>
        <translation>Diagramm: übernommen und abgeschlossen pro Stunde</translation>
    </message>
    <message>
        <source>Chart: open items</source>
        <translation>Diagramm: offene Einträge</translation>
    </message>
    <message>
        <source>Chart: handle time</source>
        <translation>Diagramm: Bearbeitungszeit</translation>
    </message>
    <message>
        <source>Claimed and completed per hour — {0}</source>
        <translation>Übernahmen/Abschlüsse je Stunde — {0}</translation>
    </message>
    <message>
        <source>Claimed</source>
        <translation>Übernommen</translation>
    </message>
    <message>
        <source>Completed</source>
        <translation>Abgeschlossen</translation>
    </message>
    <message>
        <source>Open items — set the queue&apos;s `created` column to see them</source>
        <translation>Offene Einträge — legen Sie die Spalte `created` der Warteschlange fest, um sie zu sehen</translation>
    </message>
    <message>
        <source>Open items (waiting or in progress) — {0}</source>
        <translation>Offene Einträge (wartend/in Arbeit) — {0}</translation>
    </message>
    <message>
        <source>Open</source>
        <translation>Offen</translation>
    </message>
    <message numerus="yes">
        <source>Handle time, claim to complete — %n item(s)</source>
        <translation>
            <numerusform>Bearbeitungszeit — %n Eintrag</numerusform>
            <numerusform>Bearbeitungszeit — %n Einträge</numerusform>
        </translation>
    </message>
    <message>
        <source>Items</source>
        <translation>Einträge</translation>
    </message>
    <message>
        <source>minutes</source>
        <translation>Minuten</translation>
    </message>
</context>
<context>
    <name>ConnectionDialog</name>
    <message>
        <source>PyMySQL (built in)</source>
        <translation>PyMySQL (eingebaut)</translation>
    </message>
    <message>
        <source>ODBC driver</source>
        <translation>ODBC-Treiber</translation>
    </message>
    <message>
        <source>Connect to a database</source>
        <translation>Mit einer Datenbank verbinden</translation>
    </message>
    <message>
        <source>Connection: {0}</source>
        <translation>Verbindung: {0}</translation>
    </message>
    <message>
        <source>workbench works a queue of records in your organisation&apos;s database. Describe the connection once; your IT department can tell you the server and database names.</source>
        <translation>workbench arbeitet eine Warteschlange von Datensätzen in der Datenbank Ihrer Organisation ab. Beschreiben Sie die Verbindung einmal; Server- und Datenbanknamen erfahren Sie von Ihrer IT-Abteilung.</translation>
    </message>
    <message>
        <source>e.g. Helpdesk (office)</source>
        <translation>z. B. Helpdesk (Büro)</translation>
    </message>
    <message>
        <source>Profile &amp;name:</source>
        <translation>Profil&amp;name:</translation>
    </message>
    <message>
        <source>&amp;Database:</source>
        <translation>&amp;Datenbank:</translation>
    </message>
    <message>
        <source>server name or address</source>
        <translation>Servername oder -adresse</translation>
    </message>
    <message>
        <source>Port:</source>
        <translation>Port:</translation>
    </message>
    <message>
        <source>&amp;Server:</source>
        <translation>S&amp;erver:</translation>
    </message>
    <message>
        <source>database name</source>
        <translation>Name der Datenbank</translation>
    </message>
    <message>
        <source>Database na&amp;me:</source>
        <translation>Datenbankna&amp;me:</translation>
    </message>
    <message>
        <source>Log in with my &amp;Windows account</source>
        <translation>Mit meinem &amp;Windows-Konto anmelden</translation>
    </message>
    <message>
        <source>database login</source>
        <translation>Datenbank-Anmeldename</translation>
    </message>
    <message>
        <source>&amp;User:</source>
        <translation>&amp;Benutzer:</translation>
    </message>
    <message>
        <source>&amp;Remember in the OS password store</source>
        <translation>&amp;Im Passwortspeicher des Systems merken</translation>
    </message>
    <message>
        <source>&amp;Password:</source>
        <translation>&amp;Passwort:</translation>
    </message>
    <message>
        <source>Dri&amp;ver:</source>
        <translation>T&amp;reiber:</translation>
    </message>
    <message>
        <source>&amp;ODBC driver:</source>
        <translation>&amp;ODBC-Treiber:</translation>
    </message>
    <message>
        <source>&amp;Encrypt the connection</source>
        <translation>Verbindung &amp;verschlüsseln</translation>
    </message>
    <message>
        <source>Security:</source>
        <translation>Sicherheit:</translation>
    </message>
    <message>
        <source>the .db file</source>
        <translation>die .db-Datei</translation>
    </message>
    <message>
        <source>SQLite database file</source>
        <translation>SQLite-Datenbankdatei</translation>
    </message>
    <message>
        <source>&amp;File:</source>
        <translation>Dat&amp;ei:</translation>
    </message>
    <message>
        <source>From a queue &amp;config file:</source>
        <translation>Aus einer &amp;Konfigurationsdatei:</translation>
    </message>
    <message>
        <source>Queue settings:</source>
        <translation>Einstellungen:</translation>
    </message>
    <message>
        <source>Details</source>
        <translation>Details</translation>
    </message>
    <message>
        <source>Show the database&apos;s own message</source>
        <translation>Die Meldung der Datenbank selbst zeigen</translation>
    </message>
    <message>
        <source>&amp;Test connection</source>
        <translation>Verbindung &amp;testen</translation>
    </message>
    <message>
        <source>Browse…</source>
        <translation>Durchsuchen…</translation>
    </message>
    <message>
        <source>no ODBC driver is installed</source>
        <translation>kein ODBC-Treiber installiert</translation>
    </message>
    <message>
        <source>SQLite database</source>
        <translation>SQLite-Datenbank</translation>
    </message>
    <message>
        <source>SQLite databases (*.db *.sqlite *.sqlite3);;All files (*)</source>
        <translation>SQLite-Datenbanken (*.db *.sqlite *.sqlite3);;Alle Dateien (*)</translation>
    </message>
    <message>
        <source>Queue config file</source>
        <translation>Konfigurationsdatei der Warteschlangen</translation>
    </message>
    <message>
        <source>workbench config (*.toml);;All files (*)</source>
        <translation>workbench-Konfiguration (*.toml);;Alle Dateien (*)</translation>
    </message>
    <message>
        <source>another profile has this name; choose another</source>
        <translation>ein anderes Profil hat diesen Namen; wählen Sie einen anderen</translation>
    </message>
    <message>
        <source>there is no file {0}</source>
        <translation>die Datei {0} gibt es nicht</translation>
    </message>
    <message>
        <source>Testing the connection to {0}…</source>
        <translation>Verbindung zu {0} wird getestet…</translation>
    </message>
    <message>
        <source>Profile name</source>
        <translation>Profilname</translation>
    </message>
    <message>
        <source>Database</source>
        <translation>Datenbank</translation>
    </message>
    <message>
        <source>Server</source>
        <translation>Server</translation>
    </message>
    <message>
        <source>Port</source>
        <translation>Port</translation>
    </message>
    <message>
        <source>Trust the server&apos;s certi&amp;ficate (self-signed)</source>
        <translation>Dem Server&amp;zertifikat vertrauen (selbst signiert)</translation>
    </message>
    <message>
        <source>Pu&amp;blished in the database by a supervisor</source>
        <translation>&amp;Aus der Datenbank (von einem Supervisor veröffentlicht)</translation>
    </message>
    <message>
        <source>Open the demo &amp;instead</source>
        <translation>Demo ö&amp;ffnen</translation>
    </message>
    <message>
        <source>S&amp;ave and connect</source>
        <translation>&amp;Speichern und verbinden</translation>
    </message>
    <message>
        <source>“Details” shows the database&apos;s own message.</source>
        <translation>„Details“ zeigt die Meldung der Datenbank.</translation>
    </message>
    <message>
        <source>The test itself failed; Details shows the error.</source>
        <translation>Der Test selbst ist fehlgeschlagen; unter Details steht der Fehler.</translation>
    </message>
    <message>
        <source>Database name</source>
        <translation>Datenbankname</translation>
    </message>
    <message>
        <source>User</source>
        <translation>Benutzer</translation>
    </message>
    <message>
        <source>File</source>
        <translation>Datei</translation>
    </message>
    <message>
        <source>Windows account</source>
        <translation>Windows-Konto</translation>
    </message>
    <message>
        <source>Queue settings</source>
        <translation>Warteschlangen-Einstellungen</translation>
    </message>
    <message>
        <source>Driver</source>
        <translation>Treiber</translation>
    </message>
    <message>
        <source>Kept in {0}; never written to a file.</source>
        <translation>Aufbewahrt in {0}; nie in eine Datei geschrieben.</translation>
    </message>
    <message>
        <source>Cannot remember it here: asked each time</source>
        <translation>Kann hier nicht gemerkt werden: wird jedes Mal abgefragt</translation>
    </message>
    <message>
        <source>no OS password store (Windows Credential Manager, macOS Keychain or a Secret Service such as GNOME Keyring) is available on this computer</source>
        <translation>auf diesem Computer gibt es keinen Passwortspeicher des Systems (Windows-Anmeldeinformationsverwaltung, macOS-Schlüsselbund oder einen Secret Service wie GNOME Keyring)</translation>
    </message>
    <message>
        <source>Not remembered: {0}. The password is never written to a file.</source>
        <translation>Nicht gemerkt: {0}. Das Passwort wird nie in eine Datei geschrieben.</translation>
    </message>
</context>
<context>
    <name>Crash</name>
    <message>
        <source>Something went wrong inside workbench. Edits already written to the local journal are kept; if the window warns that the journal cannot be written, Save your edits before closing.

Details are in {log}.</source>
        <translation>In workbench ist etwas schiefgegangen. Änderungen, die bereits im lokalen Journal stehen, bleiben erhalten; warnt das Fenster, dass das Journal nicht geschrieben werden kann, speichern Sie Ihre Änderungen vor dem Schließen.

Einzelheiten stehen in {log}.</translation>
    </message>
    <message>
        <source>workbench: unexpected error</source>
        <translation>workbench: unerwarteter Fehler</translation>
    </message>
</context>
<context>
    <name>DeferDialog</name>
    <message>
        <source>Defer item</source>
        <translation>Eintrag zurückstellen</translation>
    </message>
    <message>
        <source>Put {0} aside until a time: nobody is given it before, then it comes first, to you for a while.</source>
        <translation>{0} bis zu einem Zeitpunkt zurückstellen: Vorher bekommt ihn niemand, danach kommt er zuerst, eine Weile nur zu Ihnen.</translation>
    </message>
    <message>
        <source>Your unsaved edits will be discarded.</source>
        <translation>Ihre ungespeicherten Änderungen werden verworfen.</translation>
    </message>
    <message>
        <source>&amp;Until:</source>
        <translation>&amp;Bis:</translation>
    </message>
    <message>
        <source>Until</source>
        <translation>Bis</translation>
    </message>
    <message>
        <source>In 1 hour</source>
        <translation>In 1 Stunde</translation>
    </message>
    <message>
        <source>Tomorrow 9:00</source>
        <translation>Morgen 9:00</translation>
    </message>
    <message>
        <source>Monday 9:00</source>
        <translation>Montag 9:00</translation>
    </message>
    <message>
        <source>&amp;Reason (pick one or type your own):</source>
        <translation>&amp;Grund (auswählen oder selbst eingeben):</translation>
    </message>
    <message>
        <source>&amp;Note for whoever takes it next (required):</source>
        <translation>&amp;Notiz für die nächste Bearbeitung (erforderlich):</translation>
    </message>
    <message>
        <source>&amp;Note for whoever takes it next (optional):</source>
        <translation>&amp;Notiz für die nächste Bearbeitung (optional):</translation>
    </message>
    <message>
        <source>Defer</source>
        <translation>Zurückstellen</translation>
    </message>
    <message>
        <source>Choose a time still to come.</source>
        <translation>Wählen Sie einen Zeitpunkt in der Zukunft.</translation>
    </message>
    <message>
        <source>Say why, for the history (pick a reason or type one).</source>
        <translation>Nennen Sie den Grund für den Verlauf (auswählen oder eingeben).</translation>
    </message>
    <message>
        <source>This queue needs a note with a defer.</source>
        <translation>Diese Warteschlange verlangt beim Zurückstellen eine Notiz.</translation>
    </message>
</context>
<context>
    <name>DraftAccess</name>
    <message>
        <source>There is no kept draft of {0}.</source>
        <translation>Von {0} gibt es keinen aufbewahrten Entwurf.</translation>
    </message>
    <message>
        <source>Copied to the clipboard.</source>
        <translation>In die Zwischenablage kopiert.</translation>
    </message>
</context>
<context>
    <name>DraftDialog</name>
    <message>
        <source>Your draft of {0}</source>
        <translation>Ihr Entwurf von {0}</translation>
    </message>
    <message>
        <source>Unsaved edits of {0}, last change {1} (read-only; only changed fields are listed).</source>
        <translation>Ungespeicherte Änderungen an {0}, letzte Änderung {1} (schreibgeschützt; nur geänderte Felder werden aufgeführt).</translation>
    </message>
    <message>
        <source>Reading the item from the database…</source>
        <translation>Eintrag wird aus der Datenbank gelesen…</translation>
    </message>
    <message>
        <source>Field</source>
        <translation>Feld</translation>
    </message>
    <message>
        <source>Your draft</source>
        <translation>Ihr Entwurf</translation>
    </message>
    <message>
        <source>When you started</source>
        <translation>Als Sie begonnen haben</translation>
    </message>
    <message>
        <source>In the database now</source>
        <translation>Jetzt in der Datenbank</translation>
    </message>
    <message>
        <source>reading…</source>
        <translation>wird gelesen…</translation>
    </message>
    <message>
        <source>Your draft beside the values when you started and now</source>
        <translation>Ihr Entwurf neben den Werten zu Beginn und jetzt</translation>
    </message>
    <message>
        <source>&amp;Copy as text</source>
        <translation>Als Text &amp;kopieren</translation>
    </message>
    <message>
        <source>&amp;Discard draft…</source>
        <translation>Entwurf &amp;verwerfen…</translation>
    </message>
    <message>
        <source>(unknown)</source>
        <translation>(unbekannt)</translation>
    </message>
</context>
<context>
    <name>DraftView</name>
    <message>
        <source>you hold it (until {0})</source>
        <translation>Sie haben den Eintrag gesperrt (bis {0})</translation>
    </message>
    <message>
        <source>{0} holds it since {1} (until {2})</source>
        <translation>{0} hat den Eintrag seit {1} gesperrt (bis {2})</translation>
    </message>
    <message>
        <source>your lock on it has run out: it is free to claim</source>
        <translation>Ihre Sperre ist abgelaufen: Sie können den Eintrag wieder übernehmen</translation>
    </message>
    <message>
        <source>{0}&apos;s lock on it has run out: it is free to claim</source>
        <translation>Die Sperre von {0} ist abgelaufen: der Eintrag kann übernommen werden</translation>
    </message>
    <message>
        <source>nobody holds it: it is free to claim</source>
        <translation>niemand hat den Eintrag gesperrt: er kann übernommen werden</translation>
    </message>
    <message>
        <source>it is finished ({0})</source>
        <translation>der Eintrag ist abgeschlossen ({0})</translation>
    </message>
    <message>
        <source>it is not waiting to be worked on</source>
        <translation>der Eintrag wartet nicht auf Bearbeitung</translation>
    </message>
    <message>
        <source>an unknown time</source>
        <translation>unbekannter Zeit</translation>
    </message>
    <message>
        <source>Lock lost: your lock on {0} expired at {1}</source>
        <translation>Sperre verloren: Ihre Sperre auf {0} ist um {1} abgelaufen</translation>
    </message>
    <message>
        <source>Lock lost: {0} was completed by {1} at {2}</source>
        <translation>Sperre verloren: {0} wurde um {2} von {1} abgeschlossen</translation>
    </message>
    <message>
        <source>Lock lost: {0} was released by {1} at {2}</source>
        <translation>Sperre verloren: {0} wurde um {2} von {1} freigegeben</translation>
    </message>
    <message>
        <source>Lock lost: supervisor {0} released {1} at {2}</source>
        <translation>Sperre verloren: Supervisor {0} hat {1} um {2} freigegeben</translation>
    </message>
    <message>
        <source>Lock lost: supervisor {0} gave {1} to {2} at {3}</source>
        <translation>Sperre verloren: Supervisor {0} hat {1} um {3} {2} zugewiesen</translation>
    </message>
    <message>
        <source>Lock lost: supervisor {0} gave {1} to someone else at {2}</source>
        <translation>Sperre verloren: Supervisor {0} hat {1} um {2} jemand anderem zugewiesen</translation>
    </message>
    <message>
        <source>Lock lost: you no longer hold a lock on {0}</source>
        <translation>Sperre verloren: Sie halten keine Sperre mehr auf {0}</translation>
    </message>
    <message>
        <source>(reason: {0})</source>
        <translation>(Grund: {0})</translation>
    </message>
    <message>
        <source>You hold it now, under another lock.</source>
        <translation>Sie haben ihn jetzt selbst gesperrt, unter einer anderen Sperre.</translation>
    </message>
    <message>
        <source>{0} holds it now.</source>
        <translation>Jetzt hat {0} ihn gesperrt.</translation>
    </message>
    <message>
        <source>Nobody has taken it since: you can claim it again to continue.</source>
        <translation>Niemand hat ihn seitdem übernommen: Sie können ihn erneut übernehmen und weiterarbeiten.</translation>
    </message>
    <message>
        <source>Nobody holds it now.</source>
        <translation>Niemand hat ihn jetzt gesperrt.</translation>
    </message>
    <message>
        <source>who holds it is not known: {0}</source>
        <translation>wer ihn gesperrt hat, ist nicht bekannt: {0}</translation>
    </message>
    <message>
        <source>Now (checked {0}): {1}.</source>
        <translation>Jetzt (geprüft {0}): {1}.</translation>
    </message>
    <message>
        <source>Unsaved edits of {0} by {1}, last change {2}</source>
        <translation>Ungespeicherte Änderungen an {0} von {1}, letzte Änderung {2}</translation>
    </message>
    <message>
        <source>your draft</source>
        <translation>Ihr Entwurf</translation>
    </message>
    <message>
        <source>when you started</source>
        <translation>als Sie begonnen haben</translation>
    </message>
    <message>
        <source>in the database now</source>
        <translation>jetzt in der Datenbank</translation>
    </message>
    <message>
        <source>(empty)</source>
        <translation>(leer)</translation>
    </message>
    <message>
        <source>Discard your edits?</source>
        <translation>Ihre Änderungen verwerfen?</translation>
    </message>
    <message>
        <source>Your unsaved edits to {0} will be thrown away. This cannot be undone.</source>
        <translation>Ihre ungespeicherten Änderungen an {0} werden verworfen. Das lässt sich nicht rückgängig machen.</translation>
    </message>
</context>
<context>
    <name>Durations</name>
    <message>
        <source>{0}d{1}h</source>
        <translation>{0} Tg. {1} h</translation>
    </message>
    <message>
        <source>{0}h{1}m</source>
        <translation>{0} h {1} min</translation>
    </message>
    <message>
        <source>{0}m{1}s</source>
        <translation>{0} min {1} s</translation>
    </message>
    <message>
        <source>{0}s</source>
        <translation>{0} s</translation>
    </message>
    <message>
        <source>{0}d</source>
        <translation>{0} Tg.</translation>
    </message>
    <message>
        <source>{0}h</source>
        <translation>{0} h</translation>
    </message>
    <message>
        <source>{0}m</source>
        <translation>{0} min</translation>
    </message>
</context>
<context>
    <name>ErrorKind</name>
    <message>
        <source>{0} has a problem; Details says what to fix.</source>
        <translation>In {0} stimmt etwas nicht; unter Details steht, was zu ändern ist.</translation>
    </message>
    <message>
        <source>The configuration has a problem; Details says what to fix.</source>
        <translation>In der Konfiguration stimmt etwas nicht; unter Details steht, was zu ändern ist.</translation>
    </message>
    <message>
        <source>The password could not be kept in this computer&apos;s password store.</source>
        <translation>Das Passwort konnte nicht im Passwortspeicher des Systems abgelegt werden.</translation>
    </message>
    <message>
        <source>The database cannot be reached; Details has the database&apos;s own words.</source>
        <translation>Die Datenbank ist nicht erreichbar; unter Details steht die Meldung der Datenbank.</translation>
    </message>
    <message>
        <source>This login may not do that; Details says who can grant it.</source>
        <translation>Diese Anmeldung darf das nicht; unter Details steht, wer es erlauben kann.</translation>
    </message>
    <message>
        <source>That cannot be done as asked; Details says why.</source>
        <translation>Das geht so nicht; unter Details steht, warum.</translation>
    </message>
    <message>
        <source>That could not be done; Details says why.</source>
        <translation>Das hat nicht geklappt; unter Details steht, warum.</translation>
    </message>
</context>
<context>
    <name>EscalationsDialog</name>
    <message>
        <source>Items you escalated</source>
        <translation>Von Ihnen übergebene Einträge</translation>
    </message>
    <message>
        <source>You have not handed any item of this queue to a supervisor.</source>
        <translation>Sie haben keinen Eintrag dieser Warteschlange an einen Supervisor übergeben.</translation>
    </message>
    <message>
        <source>Waiting for a supervisor</source>
        <translation>Wartet auf einen Supervisor</translation>
    </message>
    <message>
        <source>Item</source>
        <translation>Eintrag</translation>
    </message>
    <message>
        <source>When</source>
        <translation>Wann</translation>
    </message>
    <message>
        <source>Reason</source>
        <translation>Begründung</translation>
    </message>
    <message>
        <source>What became of it</source>
        <translation>Was daraus wurde</translation>
    </message>
</context>
<context>
    <name>Events</name>
    <message>
        <source>Claimed</source>
        <translation>Übernommen</translation>
    </message>
    <message>
        <source>Saved</source>
        <translation>Gespeichert</translation>
    </message>
    <message>
        <source>Extended</source>
        <translation>Verlängert</translation>
    </message>
    <message>
        <source>Released</source>
        <translation>Freigegeben</translation>
    </message>
    <message>
        <source>Expired</source>
        <translation>Abgelaufen</translation>
    </message>
    <message>
        <source>Force-released</source>
        <translation>Zwangsfreigegeben</translation>
    </message>
    <message>
        <source>Reassigned</source>
        <translation>Neu zugewiesen</translation>
    </message>
    <message>
        <source>Completed</source>
        <translation>Abgeschlossen</translation>
    </message>
    <message>
        <source>Deferred</source>
        <translation>Zurückgestellt</translation>
    </message>
    <message>
        <source>Escalated</source>
        <translation>An Supervisor übergeben</translation>
    </message>
    <message>
        <source>Reopened</source>
        <translation>Wieder geöffnet</translation>
    </message>
    <message>
        <source>Completion undone</source>
        <translation>Abschluss zurückgenommen</translation>
    </message>
    <message>
        <source>Moved</source>
        <translation>Verschoben</translation>
    </message>
    <message>
        <source>Expired (cleared by {0}&apos;s sweep)</source>
        <translation>Abgelaufen (aufgeräumt von {0})</translation>
    </message>
    <message>
        <source>Expired (noticed when {0} claimed it)</source>
        <translation>Abgelaufen (bemerkt, als {0} ihn übernahm)</translation>
    </message>
    <message>
        <source>Reassigned to {0}</source>
        <translation>{0} neu zugewiesen</translation>
    </message>
    <message>
        <source>Locked to {0} (reassigned from {1})</source>
        <translation>Für {0} gesperrt (neu zugewiesen von {1})</translation>
    </message>
</context>
<context>
    <name>ForceReleaseDialog</name>
    <message numerus="yes">
        <source>Take %n item(s) away from {0} and put them back in the queue?</source>
        <translation>
            <numerusform>%n Eintrag von {0} wegnehmen und wieder in die Warteschlange stellen?</numerusform>
            <numerusform>%n Einträge von {0} wegnehmen und wieder in die Warteschlange stellen?</numerusform>
        </translation>
    </message>
    <message>
        <source>Their windows say who did it and why within a few seconds; unsaved edits stay with them as a draft.</source>
        <translation>Ihre Fenster zeigen innerhalb weniger Sekunden, wer das getan hat und warum; ungespeicherte Änderungen bleiben dort als Entwurf erhalten.</translation>
    </message>
    <message>
        <source>Force release</source>
        <translation>Zwangsfreigabe</translation>
    </message>
    <message>
        <source>Held by another program (under {0}): workbench did not take these locks, and that program is not told. Release them only when it no longer works on them.</source>
        <translation>Von einem anderen Programm gesperrt (unter {0}): workbench hat diese Sperren nicht gesetzt, und jenes Programm erfährt nichts davon. Nur freigeben, wenn es nicht mehr daran arbeitet.</translation>
    </message>
    <message numerus="yes">
        <source>Force release %n item(s)</source>
        <translation>
            <numerusform>%n Eintrag zwangsweise freigeben</numerusform>
            <numerusform>%n Einträge zwangsweise freigeben</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>Hotkeys</name>
    <message>
        <source>Next item: claim the next waiting item</source>
        <translation>Nächster Eintrag: den nächsten wartenden Eintrag übernehmen</translation>
    </message>
    <message>
        <source>&amp;Next item</source>
        <translation>&amp;Nächster Eintrag</translation>
    </message>
    <message>
        <source>Save your edits and keep the item</source>
        <translation>Änderungen speichern und den Eintrag behalten</translation>
    </message>
    <message>
        <source>&amp;Save</source>
        <translation>&amp;Speichern</translation>
    </message>
    <message>
        <source>Complete the item (the queue&apos;s first outcome)</source>
        <translation>Eintrag abschließen (erstes Ergebnis der Warteschlange)</translation>
    </message>
    <message>
        <source>&amp;Complete</source>
        <translation>&amp;Abschließen</translation>
    </message>
    <message>
        <source>Release the item back to the queue, with a reason</source>
        <translation>Eintrag mit Begründung an die Warteschlange zurückgeben</translation>
    </message>
    <message>
        <source>&amp;Release…</source>
        <translation>&amp;Freigeben…</translation>
    </message>
    <message>
        <source>Undo your last Complete (within the queue&apos;s undo time)</source>
        <translation>Ihren letzten Abschluss zurücknehmen (innerhalb der Frist der Warteschlange)</translation>
    </message>
    <message>
        <source>&amp;Undo Complete</source>
        <translation>Abschluss &amp;zurücknehmen</translation>
    </message>
    <message>
        <source>Defer the item until a time (it comes back first then)</source>
        <translation>Eintrag bis zu einem Zeitpunkt zurückstellen (dann kommt er zuerst)</translation>
    </message>
    <message>
        <source>&amp;Defer…</source>
        <translation>Zu&amp;rückstellen…</translation>
    </message>
    <message>
        <source>Hand the item to a supervisor, with a reason</source>
        <translation>Eintrag mit Begründung an einen Supervisor übergeben</translation>
    </message>
    <message>
        <source>Esc&amp;alate…</source>
        <translation>An Supervisor über&amp;geben…</translation>
    </message>
    <message>
        <source>Extend your lock</source>
        <translation>Sperre verlängern</translation>
    </message>
    <message>
        <source>E&amp;xtend lock</source>
        <translation>Sperre &amp;verlängern</translation>
    </message>
    <message>
        <source>Check the lock now and refresh your list</source>
        <translation>Sperre jetzt prüfen und Liste aktualisieren</translation>
    </message>
    <message>
        <source>Chec&amp;k lock now</source>
        <translation>Sperre &amp;prüfen</translation>
    </message>
    <message>
        <source>Show your unfinished items</source>
        <translation>Ihre unerledigten Einträge anzeigen</translation>
    </message>
    <message>
        <source>Your &amp;unfinished items</source>
        <translation>&amp;Unerledigte Einträge</translation>
    </message>
    <message>
        <source>Pick a specific waiting item</source>
        <translation>Einen bestimmten wartenden Eintrag auswählen</translation>
    </message>
    <message>
        <source>&amp;Pick an item…</source>
        <translation>Eintrag &amp;auswählen…</translation>
    </message>
    <message>
        <source>Choose the queue</source>
        <translation>Warteschlange wählen</translation>
    </message>
    <message>
        <source>Choose the &amp;queue</source>
        <translation>&amp;Warteschlange wählen</translation>
    </message>
    <message>
        <source>Keyboard shortcuts: see and change them</source>
        <translation>Tastenkürzel: ansehen und ändern</translation>
    </message>
    <message>
        <source>&amp;Keyboard shortcuts…</source>
        <translation>&amp;Tastenkürzel…</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>&amp;Beenden</translation>
    </message>
    <message>
        <source>Complete with the queue&apos;s outcome {0}</source>
        <translation>Mit Ergebnis {0} der Warteschlange abschließen</translation>
    </message>
    <message>
        <source>Complete with the queue&apos;s outcome {0} (here: “{1}”)</source>
        <translation>Mit Ergebnis {0} der Warteschlange abschließen (hier: „{1}“)</translation>
    </message>
    <message>
        <source>{0}: use one key combination.</source>
        <translation>{0}: Bitte nur eine Tastenkombination.</translation>
    </message>
    <message>
        <source>{0} is needed for moving and editing in the form; choose another key.</source>
        <translation>{0} wird zum Bewegen und Bearbeiten im Formular gebraucht; wählen Sie eine andere Taste.</translation>
    </message>
    <message>
        <source>{0} opens the menu “{1}”; choose another key.</source>
        <translation>{0} öffnet das Menü „{1}“; wählen Sie eine andere Taste.</translation>
    </message>
    <message>
        <source>{0} is the fixed key of “{1}”; choose another key.</source>
        <translation>{0} ist die feste Taste für „{1}“; wählen Sie eine andere Taste.</translation>
    </message>
    <message>
        <source>{0} alone would be typed into the fields; add Ctrl or Alt, or use a function key (single keys: see the option below).</source>
        <translation>{0} allein würde in die Felder getippt; nehmen Sie Strg oder Alt dazu oder eine Funktionstaste (Einzeltasten: siehe die Option unten).</translation>
    </message>
    <message>
        <source>{0} is set for both “{1}” and “{2}”.</source>
        <translation>{0} ist sowohl für „{1}“ als auch für „{2}“ vergeben.</translation>
    </message>
    <message>
        <source>Quit (gives back an untouched item; asks about one you worked on)</source>
        <translation>Beenden (gibt einen unberührten Eintrag zurück; fragt bei einem bearbeiteten nach)</translation>
    </message>
</context>
<context>
    <name>ItemLogPanel</name>
    <message>
        <source>Notes and history</source>
        <translation>Notizen und Verlauf</translation>
    </message>
    <message>
        <source>Notes and history of this item</source>
        <translation>Notizen und Verlauf dieses Eintrags</translation>
    </message>
    <message>
        <source>&amp;New note:</source>
        <translation>&amp;Neue Notiz:</translation>
    </message>
    <message>
        <source>For whoever works this item next…</source>
        <translation>Für alle, die diesen Eintrag als Nächste bearbeiten…</translation>
    </message>
    <message>
        <source>New note</source>
        <translation>Neue Notiz</translation>
    </message>
    <message>
        <source>Add note</source>
        <translation>Notiz hinzufügen</translation>
    </message>
    <message>
        <source>{0} wrote, {1}:</source>
        <translation>{0} schrieb am {1}:</translation>
    </message>
    <message>
        <source>{0} by {1}, {2}</source>
        <translation>{0} von {1}, {2}</translation>
    </message>
    <message>
        <source>{0}, {1}</source>
        <translation>{0}, {1}</translation>
    </message>
</context>
<context>
    <name>JournalStatus</name>
    <message>
        <source>The local journal folder {dir} cannot be used ({reason}).</source>
        <translation>Der lokale Journalordner {dir} kann nicht verwendet werden ({reason}).</translation>
    </message>
    <message>
        <source>The local journal folder {dir} cannot be read ({reason}).</source>
        <translation>Der lokale Journalordner {dir} kann nicht gelesen werden ({reason}).</translation>
    </message>
    <message>
        <source>Your unsaved edits cannot be written to the local journal in {dir} ({reason}).</source>
        <translation>Ihre ungespeicherten Änderungen können nicht in das lokale Journal in {dir} geschrieben werden ({reason}).</translation>
    </message>
    <message>
        <source>A draft that is already saved cannot be removed from the local journal in {dir} ({reason}).</source>
        <translation>Ein bereits gespeicherter Entwurf kann nicht aus dem lokalen Journal in {dir} entfernt werden ({reason}).</translation>
    </message>
    <message>
        <source>Free some disk space</source>
        <translation>Geben Sie Speicherplatz frei</translation>
    </message>
    <message>
        <source>Make that folder writable</source>
        <translation>Machen Sie diesen Ordner beschreibbar</translation>
    </message>
    <message>
        <source>Remove or rename the file that stands where that folder (or one above it) should be</source>
        <translation>Entfernen oder benennen Sie die Datei um, die dort liegt, wo dieser Ordner (oder einer darüber) sein sollte</translation>
    </message>
    <message>
        <source>Check that disk</source>
        <translation>Prüfen Sie diesen Datenträger</translation>
    </message>
    <message>
        <source>Save and Complete still store your edits in the database; until then they are only in this window and would be lost if workbench or the computer stopped.</source>
        <translation>Speichern und Abschließen legen Ihre Änderungen weiterhin in der Datenbank ab; bis dahin sind sie nur in diesem Fenster und gingen verloren, wenn workbench oder der Computer anhält.</translation>
    </message>
    <message>
        <source>{advice}; workbench tries again on its own.</source>
        <translation>{advice}; workbench versucht es selbstständig erneut.</translation>
    </message>
    <message>
        <source>Try again now</source>
        <translation>Jetzt erneut versuchen</translation>
    </message>
    <message>
        <source>Unsaved edits would be lost</source>
        <translation>Ungespeicherte Änderungen gingen verloren</translation>
    </message>
    <message>
        <source>Your unsaved edits could not be written to the local journal, so closing now loses them. Stay, and Save or Complete to store them in the database, or fix the disk problem shown in the window.</source>
        <translation>Ihre ungespeicherten Änderungen konnten nicht in das lokale Journal geschrieben werden; wenn Sie jetzt schließen, gehen sie verloren. Bleiben Sie und speichern oder schließen Sie den Eintrag ab, um sie in der Datenbank abzulegen, oder beheben Sie das im Fenster angezeigte Datenträgerproblem.</translation>
    </message>
    <message>
        <source>Stay</source>
        <translation>Bleiben</translation>
    </message>
    <message>
        <source>Close and lose the edits</source>
        <translation>Schließen und Änderungen verlieren</translation>
    </message>
</context>
<context>
    <name>Language</name>
    <message>
        <source>&amp;System default</source>
        <translation>&amp;Systemsprache</translation>
    </message>
</context>
<context>
    <name>Launcher</name>
    <message>
        <source>workbench: configuration problem</source>
        <translation>workbench: Problem mit der Konfiguration</translation>
    </message>
    <message>
        <source>Connecting to {0}…</source>
        <translation>Verbindung zu {0} wird hergestellt…</translation>
    </message>
    <message>
        <source>The database refused the login of {0}: wrong password or no such user. The password comes from the environment variable named in the config file.</source>
        <translation>Die Datenbank hat die Anmeldung für {0} abgelehnt: falsches Passwort oder unbekannter Benutzer. Das Passwort kommt aus der Umgebungsvariablen, die die Konfigurationsdatei nennt.</translation>
    </message>
    <message>
        <source>The server refused this password for {0}: check it (Caps Lock?) and try again.</source>
        <translation>Der Server hat dieses Passwort für {0} abgelehnt: Bitte prüfen (Feststelltaste?) und erneut versuchen.</translation>
    </message>
    <message>
        <source>{0} You will be asked again next time.</source>
        <translation>{0} Beim nächsten Mal werden Sie wieder gefragt.</translation>
    </message>
    <message>
        <source>&amp;Connection</source>
        <translation>&amp;Verbindung</translation>
    </message>
    <message>
        <source>No saved connections</source>
        <translation>Keine gespeicherten Verbindungen</translation>
    </message>
    <message>
        <source>&amp;New connection…</source>
        <translation>&amp;Neue Verbindung…</translation>
    </message>
    <message>
        <source>&amp;Edit this connection…</source>
        <translation>Diese Verbindung &amp;bearbeiten…</translation>
    </message>
    <message>
        <source>&amp;Forget the stored password</source>
        <translation>Gespeichertes Passwort &amp;vergessen</translation>
    </message>
    <message>
        <source>&amp;Supervisor console…</source>
        <translation>&amp;Supervisor-Konsole…</translation>
    </message>
    <message>
        <source>&amp;Reload queue settings</source>
        <translation>Warteschlangen-Einstellungen neu &amp;laden</translation>
    </message>
    <message>
        <source>There is no connection profile {0} any more.</source>
        <translation>Das Verbindungsprofil {0} gibt es nicht mehr.</translation>
    </message>
    <message>
        <source>The stored password was removed; you will be asked next time.</source>
        <translation>Das gespeicherte Passwort wurde entfernt; Sie werden beim nächsten Mal gefragt.</translation>
    </message>
    <message>
        <source>No password was stored for this connection.</source>
        <translation>Für diese Verbindung war kein Passwort gespeichert.</translation>
    </message>
    <message>
        <source>A supervisor published new queue settings (version {0}). They apply when the window reloads: Connection ▸ Reload queue settings (your item and edits are kept).</source>
        <translation>Ein Supervisor hat neue Warteschlangen-Einstellungen veröffentlicht (Version {0}). Sie gelten, sobald das Fenster neu lädt: Verbindung ▸ Warteschlangen-Einstellungen neu laden (Ihr Eintrag und Ihre Änderungen bleiben erhalten).</translation>
    </message>
    <message>
        <source>You hold {0} {1}. It stays locked to you and your unsaved edits are kept: it is in your unfinished items when you come back. Continue?</source>
        <translation>Sie haben {0} {1} gesperrt. Der Eintrag bleibt für Sie gesperrt und Ihre ungespeicherten Änderungen bleiben erhalten: Er steht bei Ihrer Rückkehr in Ihren unerledigten Einträgen. Fortfahren?</translation>
    </message>
    <message>
        <source>workbench: cannot connect</source>
        <translation>workbench: Verbindung nicht möglich</translation>
    </message>
    <message>
        <source>Cannot open {0}.</source>
        <translation>{0} kann nicht geöffnet werden.</translation>
    </message>
    <message>
        <source>Try again</source>
        <translation>Erneut versuchen</translation>
    </message>
    <message>
        <source>Edit connection…</source>
        <translation>Verbindung bearbeiten…</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>Abbrechen</translation>
    </message>
</context>
<context>
    <name>LookupEdit</name>
    <message>
        <source>Type to search {0}</source>
        <translation>Tippen, um in {0} zu suchen</translation>
    </message>
    <message>
        <source>Type to search; Down to the rows, Enter picks</source>
        <translation>Tippen sucht; Pfeil nach unten in die Liste, Eingabetaste wählt</translation>
    </message>
</context>
<context>
    <name>MainWindow</name>
    <message>
        <source>Next item</source>
        <translation>Nächster Eintrag</translation>
    </message>
    <message>
        <source>Claim the next waiting item ({0})</source>
        <translation>Den nächsten wartenden Eintrag übernehmen ({0})</translation>
    </message>
    <message>
        <source>Pick…</source>
        <translation>Auswählen…</translation>
    </message>
    <message>
        <source>Narrow Next item</source>
        <translation>Nächsten Eintrag eingrenzen</translation>
    </message>
    <message>
        <source>Next item serves only items with this value</source>
        <translation>Nächster Eintrag bringt nur Einträge mit diesem Wert</translation>
    </message>
    <message>
        <source>My unfinished items</source>
        <translation>Meine unerledigten Einträge</translation>
    </message>
    <message>
        <source>Dismiss</source>
        <translation>Ausblenden</translation>
    </message>
    <message>
        <source>Connecting…</source>
        <translation>Verbindung wird hergestellt…</translation>
    </message>
    <message>
        <source>Opening the queues…</source>
        <translation>Warteschlangen werden geöffnet…</translation>
    </message>
    <message>
        <source>Extend</source>
        <translation>Verlängern</translation>
    </message>
    <message>
        <source>Claim again and reapply my edits</source>
        <translation>Erneut übernehmen mit Änderungen</translation>
    </message>
    <message>
        <source>View my draft…</source>
        <translation>Entwurf ansehen…</translation>
    </message>
    <message>
        <source>Discard my edits</source>
        <translation>Änderungen verwerfen</translation>
    </message>
    <message>
        <source>Release…</source>
        <translation>Freigeben…</translation>
    </message>
    <message>
        <source>Defer…</source>
        <translation>Zurückstellen…</translation>
    </message>
    <message>
        <source>Save</source>
        <translation>Speichern</translation>
    </message>
    <message>
        <source>&amp;Item</source>
        <translation>&amp;Eintrag</translation>
    </message>
    <message>
        <source>&amp;View</source>
        <translation>&amp;Ansicht</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation>&amp;Hilfe</translation>
    </message>
    <message>
        <source>About workbench</source>
        <translation>Über workbench</translation>
    </message>
    <message>
        <source>&amp;Language</source>
        <translation>&amp;Sprache</translation>
    </message>
    <message>
        <source>&amp;Appearance</source>
        <translation>&amp;Darstellung</translation>
    </message>
    <message>
        <source>Language</source>
        <translation>Sprache</translation>
    </message>
    <message>
        <source>The new language is used the next time workbench starts.</source>
        <translation>Die neue Sprache gilt ab dem nächsten Start von workbench.</translation>
    </message>
    <message>
        <source>workbench — {0} — {1}</source>
        <translation>workbench — {0} — {1}</translation>
    </message>
    <message>
        <source>Queues: waiting items, yours and overdue ones</source>
        <translation>Warteschlangen: wartende, Ihre und überfällige Einträge</translation>
    </message>
    <message>
        <source>Queue</source>
        <translation>Warteschlange</translation>
    </message>
    <message>
        <source>Waiting</source>
        <translation>Wartend</translation>
    </message>
    <message>
        <source>Yours</source>
        <translation>Ihre</translation>
    </message>
    <message>
        <source>Overdue</source>
        <translation>Überfällig</translation>
    </message>
    <message>
        <source>more than {0}</source>
        <translation>mehr als {0}</translation>
    </message>
    <message>
        <source>Nothing to save: no field was changed.</source>
        <translation>Nichts zu speichern: Kein Feld wurde geändert.</translation>
    </message>
    <message>
        <source>Complete as “{0}”</source>
        <translation>Abschließen als „{0}“</translation>
    </message>
    <message>
        <source>This queue needs a note with this outcome: say what was done, for whoever looks at {0} later.</source>
        <translation>Diese Warteschlange verlangt zu diesem Ergebnis eine Notiz: Schreiben Sie, was getan wurde, für alle, die sich {0} später ansehen.</translation>
    </message>
    <message>
        <source>Undo Complete</source>
        <translation>Abschluss zurücknehmen</translation>
    </message>
    <message>
        <source>Save and complete, or release, the item you have open first; then undo.</source>
        <translation>Schließen Sie zuerst den geöffneten Eintrag ab oder geben Sie ihn frei; nehmen Sie dann zurück.</translation>
    </message>
    <message>
        <source>workbench {0}
Configuration: {1}</source>
        <translation>workbench {0}
Konfiguration: {1}</translation>
    </message>
    <message>
        <source>Press Next item ({0}) to start on {1}.</source>
        <translation>Drücken Sie „Nächster Eintrag“ ({0}), um mit {1} zu beginnen.</translation>
    </message>
    <message>
        <source>Your unsaved edits from before were restored. Save or Complete to keep them.</source>
        <translation>Ihre früheren ungespeicherten Änderungen wurden wiederhergestellt. Speichern oder schließen Sie ab, um sie zu behalten.</translation>
    </message>
    <message>
        <source>{0} (resumed)</source>
        <translation>{0} (fortgesetzt)</translation>
    </message>
    <message numerus="yes">
        <source>The database switched to another server, which does not have %n Complete(s) you made just before: {0}. Still locked to you: open them from My unfinished items and complete them again.</source>
        <translation>
            <numerusform>Die Datenbank ist auf einen anderen Server gewechselt, dem Ihr eben erledigter Eintrag fehlt: {0}. Er ist weiter für Sie gesperrt: Öffnen Sie ihn unter Meine unerledigten Einträge und erledigen Sie ihn noch einmal.</numerusform>
            <numerusform>Die Datenbank ist auf einen anderen Server gewechselt, dem %n Ihrer eben erledigten Einträge fehlen: {0}. Sie sind weiter für Sie gesperrt: Öffnen Sie sie unter Meine unerledigten Einträge und erledigen Sie sie noch einmal.</numerusform>
        </translation>
    </message>
    <message>
        <source>Changes: relay</source>
        <translation>Änderungen: Relay</translation>
    </message>
    <message>
        <source>The change relay tells this window at once when its items change.</source>
        <translation>Das Änderungs-Relay meldet diesem Fenster sofort, wenn sich seine Einträge ändern.</translation>
    </message>
    <message>
        <source>Relay unreachable — looking for changes itself</source>
        <translation>Relay nicht erreichbar — das Fenster sucht selbst nach Änderungen</translation>
    </message>
    <message>
        <source>The change relay does not answer: this window looks for changes itself until it is back.</source>
        <translation>Das Änderungs-Relay antwortet nicht: Dieses Fenster sucht selbst nach Änderungen, bis es wieder da ist.</translation>
    </message>
    <message>
        <source>Any item</source>
        <translation>Jeder Eintrag</translation>
    </message>
    <message>
        <source>{0}: {1}</source>
        <translation>{0}: {1}</translation>
    </message>
    <message>
        <source>Queue:</source>
        <translation>Warteschlange:</translation>
    </message>
    <message>
        <source>Only:</source>
        <translation>Nur:</translation>
    </message>
    <message>
        <source>Open it</source>
        <translation>Öffnen</translation>
    </message>
    <message>
        <source>Lock timer</source>
        <translation>Restzeit der Sperre</translation>
    </message>
    <message>
        <source>&amp;Open the next item after Complete</source>
        <translation>Nach dem Abschließen den &amp;nächsten Eintrag öffnen</translation>
    </message>
    <message>
        <source>Menu bar</source>
        <translation>Menüleiste</translation>
    </message>
    <message>
        <source>&amp;About workbench</source>
        <translation>Ü&amp;ber workbench</translation>
    </message>
    <message>
        <source>Deferred</source>
        <translation>Zurückgestellt</translation>
    </message>
    <message>
        <source>Complete as “{0}” ({1})</source>
        <translation>Abschließen als „{0}“ ({1})</translation>
    </message>
    <message>
        <source>Leave this item?</source>
        <translation>Diesen Eintrag verlassen?</translation>
    </message>
    <message>
        <source>You are working on {0}.</source>
        <translation>Sie arbeiten an {0}.</translation>
    </message>
    <message>
        <source>Keep it locked: it stays yours until {0}; your unsaved edits wait in your unfinished items (Ctrl+L).</source>
        <translation>Gesperrt lassen: Er bleibt bis {0} Ihrer; Ihre ungespeicherten Änderungen warten in Ihren unerledigten Einträgen (Strg+L).</translation>
    </message>
    <message>
        <source>Keep it locked: it stays yours until {0}.</source>
        <translation>Gesperrt lassen: Er bleibt bis {0} Ihrer.</translation>
    </message>
    <message>
        <source>&amp;Keep it locked</source>
        <translation>Gesperrt &amp;lassen</translation>
    </message>
    <message>
        <source>Change relay</source>
        <translation>Änderungs-Relay</translation>
    </message>
    <message>
        <source>Escalate…</source>
        <translation>An Supervisor übergeben…</translation>
    </message>
    <message>
        <source>Items you &amp;escalated…</source>
        <translation>Von Ihnen über&amp;gebene Einträge…</translation>
    </message>
    <message>
        <source>The items you handed to a supervisor, and what became of each</source>
        <translation>Die Einträge, die Sie an einen Supervisor übergeben haben, und was aus jedem wurde</translation>
    </message>
    <message>
        <source>Escalate</source>
        <translation>An Supervisor übergeben</translation>
    </message>
    <message>
        <source>Hand {0} to a supervisor: say why. Your lock is given up; the history keeps the reason.</source>
        <translation>{0} an einen Supervisor übergeben: Sagen Sie, warum. Ihre Sperre wird aufgegeben; der Verlauf behält die Begründung.</translation>
    </message>
    <message>
        <source>&amp;Reason:</source>
        <translation>&amp;Begründung:</translation>
    </message>
    <message>
        <source>&amp;Save and keep it locked</source>
        <translation>&amp;Speichern und gesperrt lassen</translation>
    </message>
    <message>
        <source>&amp;Give it back</source>
        <translation>&amp;Zurückgeben</translation>
    </message>
    <message>
        <source>&amp;Give it back, discarding my edits</source>
        <translation>&amp;Zurückgeben, meine Änderungen verwerfen</translation>
    </message>
    <message>
        <source>Your lock on {0} has run out.</source>
        <translation>Ihre Sperre auf {0} ist abgelaufen.</translation>
    </message>
    <message>
        <source>Opened {0}</source>
        <translation>Geöffnet: {0}</translation>
    </message>
    <message>
        <source>Sent back by {0} in review: {1}</source>
        <translation>In der Prüfung von {0} zurückgeschickt: {1}</translation>
    </message>
    <message>
        <source>Sent back by {0} in review.</source>
        <translation>In der Prüfung von {0} zurückgeschickt.</translation>
    </message>
    <message>
        <source>overdue by {0}</source>
        <translation>{0} überfällig</translation>
    </message>
    <message>
        <source>due in {0}</source>
        <translation>fällig in {0}</translation>
    </message>
    <message>
        <source>{0} handed you {1} (it was {2}&apos;s). It is locked to you now.</source>
        <translation>{0} hat Ihnen {1} übergeben (vorher bei {2}). Er ist jetzt für Sie gesperrt.</translation>
    </message>
    <message>
        <source>{0} handed you {1}. It is locked to you now.</source>
        <translation>{0} hat Ihnen {1} übergeben. Er ist jetzt für Sie gesperrt.</translation>
    </message>
    <message>
        <source>Item handed to you</source>
        <translation>Eintrag an Sie übergeben</translation>
    </message>
    <message>
        <source>Nothing to do right now. {0}.</source>
        <translation>Gerade gibt es nichts zu tun. {0}.</translation>
    </message>
    <message>
        <source>Saved. Your lock runs until {0}.</source>
        <translation>Gespeichert. Ihre Sperre läuft bis {0}.</translation>
    </message>
    <message>
        <source>Completed {0} ({1}). Undo: {2}</source>
        <translation>{0} abgeschlossen ({1}). Zurücknehmen: {2}</translation>
    </message>
    <message>
        <source>Completed {0} ({1}).</source>
        <translation>{0} abgeschlossen ({1}).</translation>
    </message>
    <message>
        <source>Completed {0}. Press Next item ({1}) for the next one.</source>
        <translation>{0} abgeschlossen. Drücken Sie „Nächster Eintrag“ ({1}) für den nächsten.</translation>
    </message>
    <message>
        <source>Released. Press Next item ({0}) for the next one.</source>
        <translation>Freigegeben. Drücken Sie „Nächster Eintrag“ ({0}) für den nächsten.</translation>
    </message>
    <message>
        <source>{0} by {1} at {2}</source>
        <translation>{0} von {1} am {2}</translation>
    </message>
    <message>
        <source>{0} at {1}</source>
        <translation>{0} am {1}</translation>
    </message>
    <message>
        <source>Handed to a supervisor. Press Next item ({0}) for the next one.</source>
        <translation>An einen Supervisor übergeben. Drücken Sie „Nächster Eintrag“ ({0}) für den nächsten.</translation>
    </message>
    <message>
        <source>Deferred until {0}: it comes back to you first then. Press Next item ({1}) for the next one.</source>
        <translation>Zurückgestellt bis {0}: Dann kommt er zuerst zu Ihnen. Drücken Sie Nächster Eintrag ({1}) für den nächsten.</translation>
    </message>
    <message>
        <source>Lock extended until {0}.</source>
        <translation>Sperre verlängert bis {0}.</translation>
    </message>
    <message>
        <source>expired</source>
        <translation>abgelaufen</translation>
    </message>
    <message>
        <source>{0} left</source>
        <translation>noch {0}</translation>
    </message>
    <message>
        <source>Lock on {0}: {1}</source>
        <translation>Sperre auf {0}: {1}</translation>
    </message>
    <message>
        <source>Your lock on {0} runs out in {1}. Extend it to keep working, or your edits stay here as a draft.</source>
        <translation>Ihre Sperre auf {0} läuft in {1} ab. Verlängern Sie sie, um weiterzuarbeiten, sonst bleiben Ihre Änderungen hier als Entwurf.</translation>
    </message>
    <message>
        <source>Lock about to expire</source>
        <translation>Sperre läuft bald ab</translation>
    </message>
    <message>
        <source>Your edits are kept as a draft.</source>
        <translation>Ihre Änderungen bleiben als Entwurf erhalten.</translation>
    </message>
    <message>
        <source>You had no unsaved edits.</source>
        <translation>Sie hatten keine ungespeicherten Änderungen.</translation>
    </message>
    <message>
        <source>Claim again</source>
        <translation>Erneut übernehmen</translation>
    </message>
    <message>
        <source>Lock lost</source>
        <translation>Sperre verloren</translation>
    </message>
    <message>
        <source>Your edits are kept as a draft: “View my draft…” shows them beside the current values, to copy or discard.</source>
        <translation>Ihre Änderungen bleiben als Entwurf erhalten: „Entwurf ansehen…“ zeigt sie neben den aktuellen Werten, zum Kopieren oder Verwerfen.</translation>
    </message>
    <message>
        <source>{0} is yours again: you hold it until {1}. Carry on where you left off.</source>
        <translation>{0} gehört wieder Ihnen: Sie haben ihn gesperrt bis {1}. Machen Sie dort weiter, wo Sie aufgehört haben.</translation>
    </message>
    <message>
        <source>Carry on with my edits</source>
        <translation>Mit meinen Änderungen weiterarbeiten</translation>
    </message>
    <message>
        <source>Carry on</source>
        <translation>Weiterarbeiten</translation>
    </message>
    <message>
        <source>Your draft is kept: it is shown beside the current values.</source>
        <translation>Ihr Entwurf bleibt erhalten: Er wird neben den aktuellen Werten angezeigt.</translation>
    </message>
    <message>
        <source>The lock cannot be extended beyond {0}: this queue allows at most {1} per lock.</source>
        <translation>Die Sperre kann nicht über {0} hinaus verlängert werden: diese Warteschlange erlaubt höchstens {1} je Sperre.</translation>
    </message>
    <message>
        <source>Connected as {0} (database login {1}) — {2}</source>
        <translation>Verbunden als {0} (Datenbank-Anmeldung {1}) — {2}</translation>
    </message>
    <message>
        <source>Connected as {0} — {1}</source>
        <translation>Verbunden als {0} — {1}</translation>
    </message>
    <message>
        <source>Database unreachable — reconnecting (next try in {0:.0f} s); your work here is kept.</source>
        <translation>Datenbank nicht erreichbar — neuer Versuch in {0:.0f} s; Ihre Arbeit hier bleibt erhalten.</translation>
    </message>
    <message>
        <source>Waiting for the database… (your work here is kept)</source>
        <translation>Warten auf die Datenbank… (Ihre Arbeit hier bleibt erhalten)</translation>
    </message>
    <message>
        <source>Edits discarded. Press Next item ({0}) for the next one.</source>
        <translation>Änderungen verworfen. Drücken Sie „Nächster Eintrag“ ({0}) für den nächsten.</translation>
    </message>
</context>
<context>
    <name>MoveDialog</name>
    <message>
        <source>Move waiting items</source>
        <translation>Wartende Einträge verschieben</translation>
    </message>
    <message>
        <source>Change the waiting items of {0} that nobody holds. Items someone holds, and finished ones, stay as they are.</source>
        <translation>Die wartenden Einträge von {0} ändern, die niemand hält. Gehaltene und erledigte Einträge bleiben, wie sie sind.</translation>
    </message>
    <message>
        <source>Move</source>
        <translation>Verschieben</translation>
    </message>
    <message>
        <source>required: kept in each item&apos;s history</source>
        <translation>erforderlich: steht im Verlauf jedes Eintrags</translation>
    </message>
    <message>
        <source>Items whose column</source>
        <translation>Einträge, deren Spalte</translation>
    </message>
    <message>
        <source>holds the value</source>
        <translation>den Wert hat</translation>
    </message>
    <message>
        <source>Column to change</source>
        <translation>Zu ändernde Spalte</translation>
    </message>
    <message>
        <source>New value</source>
        <translation>Neuer Wert</translation>
    </message>
    <message>
        <source>&amp;Items whose:</source>
        <translation>&amp;Einträge mit:</translation>
    </message>
    <message>
        <source>is</source>
        <translation>gleich</translation>
    </message>
    <message>
        <source>&amp;Set:</source>
        <translation>&amp;Setzen:</translation>
    </message>
    <message>
        <source>to</source>
        <translation>auf</translation>
    </message>
    <message>
        <source>Loading…</source>
        <translation>Wird geladen…</translation>
    </message>
    <message>
        <source>a value</source>
        <translation>ein Wert</translation>
    </message>
    <message>
        <source>no waiting item has a value here</source>
        <translation>kein wartender Eintrag hat hier einen Wert</translation>
    </message>
    <message>
        <source>empty: no value</source>
        <translation>leer: kein Wert</translation>
    </message>
    <message>
        <source>required</source>
        <translation>erforderlich</translation>
    </message>
    <message>
        <source>Say which items: a value of the column they are chosen by.</source>
        <translation>Welche Einträge? Geben Sie einen Wert der Spalte an, nach der sie gewählt werden.</translation>
    </message>
    <message>
        <source>The new value is the one they have: choose another.</source>
        <translation>Den neuen Wert haben sie schon: Wählen Sie einen anderen.</translation>
    </message>
    <message>
        <source>Give a reason: it goes into each item&apos;s history.</source>
        <translation>Geben Sie einen Grund an: Er steht im Verlauf jedes Eintrags.</translation>
    </message>
</context>
<context>
    <name>NoteDialog</name>
    <message>
        <source>&amp;Note:</source>
        <translation>&amp;Notiz:</translation>
    </message>
</context>
<context>
    <name>OperatorSession</name>
    <message>
        <source>unexpected error: {0}</source>
        <translation>unerwarteter Fehler: {0}</translation>
    </message>
    <message>
        <source>no item is open</source>
        <translation>kein Eintrag ist geöffnet</translation>
    </message>
</context>
<context>
    <name>PasswordDialog</name>
    <message>
        <source>workbench: password</source>
        <translation>workbench: Passwort</translation>
    </message>
    <message>
        <source>Password for &lt;b&gt;{0}&lt;/b&gt; on {1} (profile {2}):</source>
        <translation>Passwort für &lt;b&gt;{0}&lt;/b&gt; auf {1} (Profil {2}):</translation>
    </message>
    <message>
        <source>Password for {0} on {1}</source>
        <translation>Passwort für {0} auf {1}</translation>
    </message>
    <message>
        <source>&amp;Remember in the OS password store</source>
        <translation>&amp;Im Passwortspeicher des Systems merken</translation>
    </message>
    <message>
        <source>Connect</source>
        <translation>Verbinden</translation>
    </message>
</context>
<context>
    <name>PickDialog</name>
    <message>
        <source>Pick an item</source>
        <translation>Eintrag auswählen</translation>
    </message>
    <message>
        <source>Search these items</source>
        <translation>Diese Einträge durchsuchen</translation>
    </message>
    <message>
        <source>the search</source>
        <translation>Suche</translation>
    </message>
    <message numerus="yes">
        <source>The first %n waiting items of more than {0}, in queue order:</source>
        <translation>
            <numerusform>Der erste von mehr als {0} wartenden Einträgen, in der Reihenfolge der Warteschlange:</numerusform>
            <numerusform>Die ersten %n von mehr als {0} wartenden Einträgen, in der Reihenfolge der Warteschlange:</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>The first %n of {0} waiting items, in queue order:</source>
        <translation>
            <numerusform>Der erste von {0} wartenden Einträgen, in der Reihenfolge der Warteschlange:</numerusform>
            <numerusform>Die ersten %n von {0} wartenden Einträgen, in der Reihenfolge der Warteschlange:</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n waiting item(s), in queue order:</source>
        <translation>
            <numerusform>%n wartender Eintrag, in der Reihenfolge der Warteschlange:</numerusform>
            <numerusform>%n wartende Einträge, in der Reihenfolge der Warteschlange:</numerusform>
        </translation>
    </message>
    <message>
        <source>No item is waiting.</source>
        <translation>Kein Eintrag wartet.</translation>
    </message>
    <message>
        <source>Claim</source>
        <translation>Übernehmen</translation>
    </message>
</context>
<context>
    <name>ProbeText</name>
    <message>
        <source>Opened the database file {0}.</source>
        <translation>Die Datenbankdatei {0} wurde geöffnet.</translation>
    </message>
    <message>
        <source>Connected to {0} on {1} with your Windows account.</source>
        <translation>Mit {0} auf {1} über Ihr Windows-Konto verbunden.</translation>
    </message>
    <message>
        <source>Connected to {0} on {1} as {2}.</source>
        <translation>Mit {0} auf {1} als {2} verbunden.</translation>
    </message>
    <message>
        <source>The server has no database called “{0}”. Check the database name.</source>
        <translation>Auf dem Server gibt es keine Datenbank namens „{0}“. Bitte prüfen Sie den Datenbanknamen.</translation>
    </message>
    <message>
        <source>The server knows your Windows account but does not let it use the database “{0}”. Ask the database administrator for access.</source>
        <translation>Der Server kennt Ihr Windows-Konto, lässt es aber nicht auf die Datenbank „{0}“ zugreifen. Bitten Sie den Datenbankadministrator um Zugriff.</translation>
    </message>
    <message>
        <source>The server knows the user {0} but does not let them use the database “{1}”. Ask the database administrator for access.</source>
        <translation>Der Server kennt den Benutzer {0}, lässt ihn aber nicht auf die Datenbank „{1}“ zugreifen. Bitten Sie den Datenbankadministrator um Zugriff.</translation>
    </message>
    <message>
        <source>The connection failed for a reason workbench cannot put in plain words; Details shows what the database said.</source>
        <translation>Die Verbindung ist aus einem Grund fehlgeschlagen, den workbench nicht in einfachen Worten sagen kann; unter Details steht, was die Datenbank gemeldet hat.</translation>
    </message>
    <message>
        <source>The server needs a password for {0}: enter it above.</source>
        <translation>Der Server verlangt ein Passwort für {0}: Bitte geben Sie es oben ein.</translation>
    </message>
    <message>
        <source>The server does not let your Windows account connect from this computer. Ask the database administrator to allow it.</source>
        <translation>Der Server lässt Ihr Windows-Konto von diesem Computer aus nicht zu. Bitten Sie den Datenbankadministrator, es zu erlauben.</translation>
    </message>
    <message>
        <source>The server does not let {0} connect from this computer. Ask the database administrator to allow it.</source>
        <translation>Der Server lässt {0} von diesem Computer aus nicht zu. Bitten Sie den Datenbankadministrator, es zu erlauben.</translation>
    </message>
    <message>
        <source>The server refused your Windows account. Ask the database administrator for a login.</source>
        <translation>Der Server hat Ihr Windows-Konto abgewiesen. Bitten Sie den Datenbankadministrator um eine Anmeldung.</translation>
    </message>
    <message>
        <source>The server refused the login: wrong password, or no user called {0}. Check both (Caps Lock?).</source>
        <translation>Der Server hat die Anmeldung abgelehnt: falsches Passwort oder kein Benutzer namens {0}. Bitte prüfen Sie beides (Feststelltaste?).</translation>
    </message>
    <message>
        <source>The server {0} refused the connection. Check the server name and port, and that the database server is running.</source>
        <translation>Der Server {0} hat die Verbindung abgewiesen. Bitte prüfen Sie Servername und Port und ob der Datenbankserver läuft.</translation>
    </message>
    <message>
        <source>There is no server called “{0}”. Check the spelling of the server name.</source>
        <translation>Es gibt keinen Server namens „{0}“. Bitte prüfen Sie die Schreibweise des Servernamens.</translation>
    </message>
    <message>
        <source>The server {0} did not answer within {1} s. Check the server name and port, and your network (VPN?).</source>
        <translation>Der Server {0} hat nicht innerhalb von {1} s geantwortet. Bitte prüfen Sie Servername und Port sowie Ihr Netzwerk (VPN?).</translation>
    </message>
    <message>
        <source>The server {0} cannot be reached. Check the server name and port, your network, and that the database server is running.</source>
        <translation>Der Server {0} ist nicht erreichbar. Bitte prüfen Sie Servername und Port, Ihr Netzwerk und ob der Datenbankserver läuft.</translation>
    </message>
    <message>
        <source>There is no database file at {0}. Check the path.</source>
        <translation>Unter {0} gibt es keine Datenbankdatei. Bitte prüfen Sie den Pfad.</translation>
    </message>
    <message>
        <source>{0} is a folder, not a database file. Choose the file itself.</source>
        <translation>{0} ist ein Ordner, keine Datenbankdatei. Bitte wählen Sie die Datei selbst.</translation>
    </message>
    <message>
        <source>{0} is not a SQLite database, or it is damaged. Check the path, or restore a backup.</source>
        <translation>{0} ist keine SQLite-Datenbank oder ist beschädigt. Bitte prüfen Sie den Pfad oder spielen Sie eine Sicherung zurück.</translation>
    </message>
    <message>
        <source>You may not write to {0} or its folder, and workbench needs to. Ask for write access, or use a copy you may change.</source>
        <translation>Sie dürfen nicht in {0} oder dessen Ordner schreiben, workbench muss das aber. Bitten Sie um Schreibrechte oder verwenden Sie eine Kopie, die Sie ändern dürfen.</translation>
    </message>
    <message>
        <source>The database file {0} cannot be opened. Check that you may read and write it.</source>
        <translation>Die Datenbankdatei {0} lässt sich nicht öffnen. Bitte prüfen Sie, ob Sie sie lesen und schreiben dürfen.</translation>
    </message>
    <message>
        <source>The ODBC driver “{0}” is not installed on this computer. Choose an installed one, or ask your IT department to install it.</source>
        <translation>Der ODBC-Treiber „{0}“ ist auf diesem Computer nicht installiert. Wählen Sie einen installierten oder bitten Sie Ihre IT-Abteilung, ihn zu installieren.</translation>
    </message>
    <message>
        <source>No ODBC driver is chosen. Choose one of the installed drivers.</source>
        <translation>Es ist kein ODBC-Treiber gewählt. Bitte wählen Sie einen der installierten Treiber.</translation>
    </message>
    <message>
        <source>This copy of workbench lacks the part that talks to {0}. Ask your IT department to install it; Details says which.</source>
        <translation>Dieser workbench-Installation fehlt der Teil, der mit {0} spricht. Bitten Sie Ihre IT-Abteilung, ihn zu installieren; unter Details steht, welcher.</translation>
    </message>
    <message>
        <source>workbench cannot talk to this database with the chosen driver. Choose another driver.</source>
        <translation>Mit dem gewählten Treiber kann workbench nicht mit dieser Datenbank sprechen. Bitte wählen Sie einen anderen Treiber.</translation>
    </message>
</context>
<context>
    <name>Problem</name>
    <message>
        <source>contains a NUL character (code 0), which text in a database cannot hold; remove it</source>
        <translation>enthält ein NUL-Zeichen (Code 0), das Text in einer Datenbank nicht enthalten kann; bitte entfernen</translation>
    </message>
    <message>
        <source>a value is required (the column does not allow empty values)</source>
        <translation>ein Wert ist erforderlich (die Spalte erlaubt keine leeren Werte)</translation>
    </message>
    <message>
        <source>{0} is not one of {1}</source>
        <translation>{0} ist keiner der Werte {1}</translation>
    </message>
    <message>
        <source>binary columns cannot be edited</source>
        <translation>Binärspalten können nicht bearbeitet werden</translation>
    </message>
    <message>
        <source>{0} is not true/false (use true, false, yes, no, 1 or 0)</source>
        <translation>{0} ist nicht wahr/falsch (verwenden Sie true, false, yes, no, 1 oder 0)</translation>
    </message>
    <message>
        <source>{0} is not a whole number</source>
        <translation>{0} ist keine ganze Zahl</translation>
    </message>
    <message>
        <source>{0} is out of range for this column</source>
        <translation>{0} liegt außerhalb des Bereichs dieser Spalte</translation>
    </message>
    <message>
        <source>{0} is not a number</source>
        <translation>{0} ist keine Zahl</translation>
    </message>
    <message>
        <source>{0} is not a finite number</source>
        <translation>{0} ist keine endliche Zahl</translation>
    </message>
    <message>
        <source>{0} is too large for this column</source>
        <translation>{0} ist zu groß für diese Spalte</translation>
    </message>
    <message>
        <source>{0} is too large (at most {1} digits before the point)</source>
        <translation>{0} ist zu groß (höchstens {1} Stellen vor dem Komma)</translation>
    </message>
    <message>
        <source>{0} has more than {1} decimal places</source>
        <translation>{0} hat mehr als {1} Nachkommastellen</translation>
    </message>
    <message>
        <source>{0} is not a date and time (use 2026-11-21 14:30)</source>
        <translation>{0} ist kein Datum mit Uhrzeit (Beispiel: 2026-11-21 14:30)</translation>
    </message>
    <message>
        <source>{0} is not a date (use 2026-11-21)</source>
        <translation>{0} ist kein Datum (Beispiel: 2026-11-21)</translation>
    </message>
    <message>
        <source>{0} is not a time (use 14:30)</source>
        <translation>{0} ist keine Uhrzeit (Beispiel: 14:30)</translation>
    </message>
    <message>
        <source>expected text</source>
        <translation>Text erwartet</translation>
    </message>
    <message>
        <source>at most {0} characters ({1} given)</source>
        <translation>höchstens {0} Zeichen ({1} eingegeben)</translation>
    </message>
    <message>
        <source>cannot be edited</source>
        <translation>kann nicht bearbeitet werden</translation>
    </message>
    <message>
        <source>required</source>
        <translation>Pflichtfeld</translation>
    </message>
    <message>
        <source>must be at least {0}</source>
        <translation>muss mindestens {0} sein</translation>
    </message>
    <message>
        <source>must be at most {0}</source>
        <translation>darf höchstens {0} sein</translation>
    </message>
    <message>
        <source>must match {0}</source>
        <translation>muss dem Muster {0} entsprechen</translation>
    </message>
    <message>
        <source>must be one of {0}</source>
        <translation>muss einer dieser Werte sein: {0}</translation>
    </message>
    <message>
        <source>{0} is not in {1}; pick one of its rows</source>
        <translation>{0} steht nicht in {1}; wählen Sie einen Eintrag daraus</translation>
    </message>
    <message>
        <source>a note needs some text (--note TEXT, or --text TEXT for `note`)</source>
        <translation>Eine Notiz braucht Text (--note TEXT, oder --text TEXT für `note`)</translation>
    </message>
    <message>
        <source>a note holds at most {0} characters ({1} given); shorten it or split it in two</source>
        <translation>Eine Notiz fasst höchstens {0} Zeichen ({1} eingegeben); kürzen Sie sie oder teilen Sie sie in zwei</translation>
    </message>
    <message>
        <source>{0} needs a reason: say why (--reason TEXT); it is kept in the item&apos;s history</source>
        <translation>{0} braucht einen Grund: sagen Sie, warum (--reason TEXT); er wird im Verlauf des Eintrags aufbewahrt</translation>
    </message>
    <message>
        <source>defer until a time still to come (it is {0} UTC on the database&apos;s clock)</source>
        <translation>Zurückstellen bis zu einem Zeitpunkt in der Zukunft (auf der Uhr der Datenbank ist es {0} UTC)</translation>
    </message>
    <message>
        <source>defer at most {0} days ahead; for longer, change the item&apos;s status</source>
        <translation>Höchstens {0} Tage im Voraus zurückstellen; für länger ändern Sie den Status des Eintrags</translation>
    </message>
    <message>
        <source>say what to change: --set COL=VALUE</source>
        <translation>Sagen Sie, was geändert werden soll: --set SPALTE=WERT</translation>
    </message>
    <message>
        <source>{0}&apos;s lock cannot be used from the database login {1}: under `workbench grants` each person logs in with their own database login, named exactly like their workbench user</source>
        <translation>Die Sperre von {0} kann nicht von der Datenbankanmeldung {1} aus verwendet werden: unter `workbench grants` meldet sich jede Person mit ihrer eigenen Datenbankanmeldung an, genau wie ihr workbench-Benutzer benannt</translation>
    </message>
    <message>
        <source>{0} has no item with key {1}</source>
        <translation>{0} hat keinen Eintrag mit dem Schlüssel {1}</translation>
    </message>
    <message>
        <source>queue {0} has no outcome &apos;{1}&apos; (outcomes: {2})</source>
        <translation>Warteschlange {0} hat kein Ergebnis „{1}“ (Ergebnisse: {2})</translation>
    </message>
    <message>
        <source>queue {0} needs a note with {1}: say what happened for whoever works the item next (--note TEXT)</source>
        <translation>Warteschlange {0} braucht eine Notiz zu {1}: sagen Sie, was geschehen ist, für den, der den Eintrag als Nächstes bearbeitet (--note TEXT)</translation>
    </message>
    <message>
        <source>nothing to do in {0}: no item is waiting</source>
        <translation>nichts zu tun in {0}: kein Eintrag wartet</translation>
    </message>
    <message>
        <source>nothing to claim in {0} right now: the items waiting are held by open transactions (a session that locked them has not finished); try again in a moment</source>
        <translation>im Moment nichts zu übernehmen in {0}: die wartenden Einträge sind von offenen Transaktionen gesperrt (eine Sitzung, die sie gesperrt hat, ist nicht fertig); versuchen Sie es gleich noch einmal</translation>
    </message>
    <message>
        <source>nothing to do in {0} with {1}</source>
        <translation>nichts zu tun in {0} mit {1}</translation>
    </message>
    <message>
        <source>nothing for you in {0}: the items waiting are your own work from {1}, and someone else reviews them (four eyes)</source>
        <translation>nichts für Sie in {0}: die wartenden Einträge sind Ihre eigene Arbeit aus {1}, und jemand anderes prüft sie (Vier-Augen-Prinzip)</translation>
    </message>
    <message>
        <source>you already hold {1} item(s) in {0}, the most this queue allows ({2}); complete or release one first</source>
        <translation>Sie haben in {0} bereits so viele Einträge, wie die Warteschlange erlaubt ({1} von {2}); schließen Sie einen ab oder geben Sie einen frei</translation>
    </message>
    <message>
        <source>{0} {1} is held by {2} since {3} (until {4})</source>
        <translation>{0} {1} wird von {2} bearbeitet, seit {3} (bis {4})</translation>
    </message>
    <message>
        <source>{0} {1} is held by another program under the name {2} since {3}: workbench does not take it before {4}; a supervisor can release it</source>
        <translation>{0} {1} ist von einem anderen Programm unter dem Namen {2} gesperrt, seit {3}: workbench übernimmt es nicht vor {4}; ein Supervisor kann es freigeben</translation>
    </message>
    <message>
        <source>{0} {1} is held by {2} through queue {3}: it is worked on there until it is given back</source>
        <translation>{0} {1} wird von {2} über die Warteschlange {3} bearbeitet: dort bleibt es, bis es zurückgegeben wird</translation>
    </message>
    <message>
        <source>{0} {1} is your own work; someone else reviews it (four eyes)</source>
        <translation>{0} {1} ist Ihre eigene Arbeit; jemand anderes prüft sie (Vier-Augen-Prinzip)</translation>
    </message>
    <message>
        <source>{0} {1} is {2}&apos;s own work: reassign its review to someone else (four eyes)</source>
        <translation>{0} {1} ist die eigene Arbeit von {2}: weisen Sie die Prüfung jemand anderem zu (Vier-Augen-Prinzip)</translation>
    </message>
    <message>
        <source>{0} {1} is not waiting to be worked on (state: {2})</source>
        <translation>{0} {1} wartet nicht auf Bearbeitung (Zustand: {2})</translation>
    </message>
    <message>
        <source>queue {0} serves the group {1} only, and {2} is not in it; a supervisor adds you with `workbench group add {2} {1}`</source>
        <translation>Die Warteschlange {0} bedient nur die Gruppe {1}, und {2} gehört nicht dazu; ein Supervisor nimmt Sie mit `workbench group add {2} {1}` auf</translation>
    </message>
    <message>
        <source>nothing of yours to undo on {0} {1}: nothing has happened to it</source>
        <translation>Bei {0} {1} gibt es nichts von Ihnen rückgängig zu machen: mit dem Eintrag ist noch nichts geschehen</translation>
    </message>
    <message>
        <source>nothing of yours to undo on {0} {1}: the last thing that happened to it was {2} by {3}</source>
        <translation>Bei {0} {1} gibt es nichts von Ihnen rückgängig zu machen: zuletzt geschah damit {2} durch {3}</translation>
    </message>
    <message>
        <source>too late to undo: {0} {1} was completed {2} ago, and undo works for {3}; a supervisor can reopen it</source>
        <translation>Zu spät zum Rückgängigmachen: {0} {1} wurde vor {2} abgeschlossen, und Rückgängig geht nur {3} lang; ein Supervisor kann den Eintrag wieder öffnen</translation>
    </message>
    <message>
        <source>{0} {1} changed since you completed it: undo is refused; a supervisor can reopen it</source>
        <translation>{0} {1} wurde geändert, seit Sie es abgeschlossen haben: Rückgängig ist nicht möglich; ein Supervisor kann den Eintrag wieder öffnen</translation>
    </message>
    <message>
        <source>{0} {1} is held by {2}, not finished: force-release it instead</source>
        <translation>{0} {1} wird von {2} bearbeitet und ist nicht abgeschlossen: geben Sie es stattdessen zwangsweise frei</translation>
    </message>
    <message>
        <source>{0} {1} is waiting already: nothing to reopen</source>
        <translation>{0} {1} wartet bereits: es gibt nichts wieder zu öffnen</translation>
    </message>
    <message>
        <source>queue {0} does not say how to reopen an item: set [queues.{1}.on_reopen] to the values that make it wait again, e.g. status = &quot;open&quot;</source>
        <translation>Die Warteschlange {0} legt nicht fest, wie ein Eintrag wieder geöffnet wird: setzen Sie [queues.{1}.on_reopen] auf die Werte, mit denen er wieder wartet, z. B. status = &quot;open&quot;</translation>
    </message>
    <message>
        <source>queue {0} does not say how to hand an item to a supervisor: set [queues.{1}.on_escalate] to the values that take it out of the work to do, e.g. status = &quot;escalated&quot;</source>
        <translation>Die Warteschlange {0} legt nicht fest, wie ein Eintrag an einen Supervisor übergeben wird: setzen Sie [queues.{1}.on_escalate] auf die Werte, die ihn aus der offenen Arbeit nehmen, z. B. status = &quot;escalated&quot;</translation>
    </message>
    <message>
        <source>{0} {1} changed while it was being reopened; try again</source>
        <translation>{0} {1} wurde geändert, während es wieder geöffnet wurde; versuchen Sie es erneut</translation>
    </message>
    <message>
        <source>{0} {1} is not waiting for a supervisor (taken, reopened or never escalated): nothing to take</source>
        <translation>{0} {1} wartet nicht auf einen Supervisor (übernommen, wieder geöffnet oder nie eskaliert): nichts zu übernehmen</translation>
    </message>
    <message>
        <source>take is not available on queue {0}: {1}; reopen the item, then claim it</source>
        <translation>Übernehmen ist in der Queue {0} nicht möglich: {1}; öffnen Sie den Eintrag wieder und nehmen Sie ihn dann</translation>
    </message>
    <message>
        <source>queue {0} hands its escalated items to the group {1} and to supervisors, and {2} is neither; a supervisor adds {2} with `workbench group add {2} {1}`</source>
        <translation>Die Warteschlange {0} übergibt ihre eskalierten Einträge der Gruppe {1} und den Supervisoren, und {2} ist weder Mitglied der Gruppe noch Supervisor; ein Supervisor nimmt {2} mit `workbench group add {2} {1}` auf</translation>
    </message>
    <message>
        <source>{0} {1} is not locked by anyone</source>
        <translation>{0} {1} ist von niemandem gesperrt</translation>
    </message>
    <message>
        <source>{0} {1}: this item was taken in {2}; {3} it there</source>
        <translation>{0} {1}: dieser Eintrag wurde in {2} genommen; {3} dort ausführen</translation>
    </message>
    <message>
        <source>{0} {1} changed while it was being reassigned; try again</source>
        <translation>{0} {1} wurde geändert, während es neu zugewiesen wurde; versuchen Sie es erneut</translation>
    </message>
    <message>
        <source>{0} {1} changed while it was being released; try again</source>
        <translation>{0} {1} wurde geändert, während es freigegeben wurde; versuchen Sie es erneut</translation>
    </message>
    <message>
        <source>{0} {1} is not waiting, or someone holds it: a move leaves it as it is</source>
        <translation>{0} {1} wartet nicht, oder jemand hält es: ein Verschieben lässt es, wie es ist</translation>
    </message>
    <message>
        <source>a move writes neither the key nor the lock (nor a column the database computes)</source>
        <translation>Ein Verschieben schreibt weder den Schlüssel noch die Sperre (noch eine Spalte, die die Datenbank berechnet)</translation>
    </message>
    <message>
        <source>{1} would take waiting items of {0} out of its work to do: a move keeps items waiting (another category, tier, team or priority); items are finished by working them</source>
        <translation>{1} würde wartende Einträge von {0} aus der zu erledigenden Arbeit nehmen: Verschieben lässt Einträge warten (andere Kategorie, Stufe, Team oder Priorität); erledigt werden Einträge, indem man sie bearbeitet</translation>
    </message>
    <message>
        <source>force-release {0} {1}</source>
        <translation>{0} {1} zwangsweise freigeben</translation>
    </message>
    <message>
        <source>reassign {0} {1}</source>
        <translation>{0} {1} neu zuweisen</translation>
    </message>
    <message>
        <source>reopen {0} {1}</source>
        <translation>{0} {1} wieder öffnen</translation>
    </message>
    <message>
        <source>take {0} {1}</source>
        <translation>{0} {1} übernehmen</translation>
    </message>
    <message>
        <source>move items of {0}</source>
        <translation>Einträge von {0} verschieben</translation>
    </message>
    <message>
        <source>publish queue settings</source>
        <translation>Warteschlangen-Einstellungen veröffentlichen</translation>
    </message>
    <message>
        <source>change groups (here: add {0} to {1})</source>
        <translation>Gruppen ändern (hier: {0} zu {1} hinzufügen)</translation>
    </message>
    <message>
        <source>change groups (here: remove {0} from {1})</source>
        <translation>Gruppen ändern (hier: {0} aus {1} entfernen)</translation>
    </message>
    <message>
        <source>grant roles (here: {0} to {1})</source>
        <translation>Rollen vergeben (hier: {0} an {1})</translation>
    </message>
    <message>
        <source>revoke roles (here: {0}&apos;s)</source>
        <translation>Rollen entziehen (hier: die von {0})</translation>
    </message>
    <message>
        <source>{0} may not {1}: only supervisors may, and {0} is not one in this database&apos;s roles table (supervisors: {2}); a supervisor grants it with `workbench --user NAME role grant {0} supervisor`</source>
        <translation>{0} darf „{1}“ nicht: nur Supervisoren dürfen das, und {0} ist in der Rollentabelle dieser Datenbank keiner (Supervisoren: {2}); ein Supervisor erteilt das Recht mit `workbench --user NAME role grant {0} supervisor`</translation>
    </message>
    <message>
        <source>{0} may not {1}: the database allows that only to members of the role {2}, and the login {3} is not one; a database administrator grants it with GRANT {2} TO {3}</source>
        <translation>{0} darf „{1}“ nicht: die Datenbank erlaubt das nur Mitgliedern der Rolle {2}, und die Anmeldung {3} ist keines; ein Datenbankadministrator erteilt es mit GRANT {2} TO {3}</translation>
    </message>
    <message>
        <source>{0} may not {1}: the database&apos;s row-level security does not let this login change it</source>
        <translation>{0} darf „{1}“ nicht: die Sicherheit auf Zeilenebene der Datenbank lässt diese Anmeldung die Zeile nicht ändern</translation>
    </message>
    <message>
        <source>give the profile a name of 1 to 64 characters (no line breaks, no spaces at the ends)</source>
        <translation>Geben Sie dem Profil einen Namen mit 1 bis 64 Zeichen (ohne Zeilenumbrüche, ohne Leerzeichen am Anfang oder Ende)</translation>
    </message>
    <message>
        <source>choose the SQLite database file</source>
        <translation>Wählen Sie die SQLite-Datenbankdatei</translation>
    </message>
    <message>
        <source>enter the server&apos;s host name or address</source>
        <translation>Geben Sie den Hostnamen oder die Adresse des Servers ein</translation>
    </message>
    <message>
        <source>{0} is not a host name; write only the name or address, and the port in its own field</source>
        <translation>{0} ist kein Hostname; schreiben Sie nur den Namen oder die Adresse, den Port in sein eigenes Feld</translation>
    </message>
    <message>
        <source>must be between 1 and 65535</source>
        <translation>muss zwischen 1 und 65535 liegen</translation>
    </message>
    <message>
        <source>enter the database name</source>
        <translation>Geben Sie den Namen der Datenbank ein</translation>
    </message>
    <message>
        <source>enter the user name to log in with</source>
        <translation>Geben Sie den Benutzernamen für die Anmeldung ein</translation>
    </message>
    <message>
        <source>choose the installed ODBC driver, e.g. &apos;ODBC Driver 18 for SQL Server&apos;</source>
        <translation>Wählen Sie den installierten ODBC-Treiber, z. B. „ODBC Driver 18 for SQL Server“</translation>
    </message>
    <message>
        <source>choose the queue config file, or use the settings published in the database</source>
        <translation>Wählen Sie die Konfigurationsdatei der Warteschlangen oder verwenden Sie die in der Datenbank veröffentlichten Einstellungen</translation>
    </message>
</context>
<context>
    <name>QuitGuard</name>
    <message>
        <source>The database did not answer within {0:.0f} s.</source>
        <translation>Die Datenbank hat nicht innerhalb von {0:.0f} s geantwortet.</translation>
    </message>
    <message>
        <source>You are working on {0}.</source>
        <translation>Sie arbeiten an {0}.</translation>
    </message>
    <message>
        <source>Keep it locked: it stays yours until {0}; {1}</source>
        <translation>Gesperrt lassen: Der Eintrag bleibt bis {0} für Sie gesperrt; {1}</translation>
    </message>
    <message>
        <source>your unsaved edits wait in your unfinished items.</source>
        <translation>Ihre ungespeicherten Änderungen warten in Ihren unerledigten Einträgen.</translation>
    </message>
    <message>
        <source>then the lock runs out on its own.</source>
        <translation>danach läuft die Sperre von selbst ab.</translation>
    </message>
    <message>
        <source>Release it: it goes back to the queue now{0}.</source>
        <translation>Freigeben: Der Eintrag geht jetzt zurück in die Warteschlange{0}.</translation>
    </message>
    <message>
        <source>, and your unsaved edits are discarded</source>
        <translation>, und Ihre ungespeicherten Änderungen werden verworfen</translation>
    </message>
    <message>
        <source>Close workbench?</source>
        <translation>workbench schließen?</translation>
    </message>
    <message>
        <source>&amp;Keep it locked and close</source>
        <translation>Gesperrt &amp;lassen und schließen</translation>
    </message>
    <message>
        <source>&amp;Release it and close</source>
        <translation>&amp;Freigeben und schließen</translation>
    </message>
    <message>
        <source>Giving {0} back to the queue before closing…</source>
        <translation>{0} wird vor dem Schließen an die Warteschlange zurückgegeben…</translation>
    </message>
    <message>
        <source>It could not be released ({0}).</source>
        <translation>Der Eintrag konnte nicht freigegeben werden ({0}).</translation>
    </message>
    <message>
        <source>{0} stays locked to you until {1}; then the lock runs out on its own and the item goes back to the queue.</source>
        <translation>{0} bleibt bis {1} für Sie gesperrt; danach läuft die Sperre von selbst ab und der Eintrag geht zurück in die Warteschlange.</translation>
    </message>
    <message>
        <source>Closing workbench</source>
        <translation>workbench wird geschlossen</translation>
    </message>
</context>
<context>
    <name>ReassignDialog</name>
    <message>
        <source>Move {0} {1} from {2} to another operator? It is locked to them with a fresh lock; {2}&apos;s window says who did it and why, and keeps any unsaved edits as a draft.</source>
        <translation>{0} {1} von {2} an einen anderen Bearbeiter übergeben? Der Eintrag wird mit einer neuen Sperre für diesen gesperrt; das Fenster von {2} zeigt, wer das getan hat und warum, und behält ungespeicherte Änderungen als Entwurf.</translation>
    </message>
    <message>
        <source>Move these items from {0} to another operator? Each is locked to them with a fresh lock; each holder&apos;s window says who did it and why, and keeps any unsaved edits as a draft.</source>
        <translation>Diese Einträge von {0} an jemand anderen übergeben? Jeder wird mit einer neuen Sperre für die neue Person gesperrt; das Fenster jeder bisherigen Person sagt, wer es warum getan hat, und behält ungespeicherte Änderungen als Entwurf.</translation>
    </message>
    <message>
        <source>Reassign</source>
        <translation>Neu zuweisen</translation>
    </message>
    <message>
        <source>&amp;To:</source>
        <translation>&amp;An:</translation>
    </message>
    <message>
        <source>Name the operator who takes the item over.</source>
        <translation>Nennen Sie den Bearbeiter, der den Eintrag übernimmt.</translation>
    </message>
    <message>
        <source>{0} already holds it.</source>
        <translation>{0} hat ihn bereits gesperrt.</translation>
    </message>
</context>
<context>
    <name>RecordForm</name>
    <message>
        <source>a whole number</source>
        <translation>eine ganze Zahl</translation>
    </message>
    <message>
        <source>a number, e.g. 12.50</source>
        <translation>eine Zahl, z. B. 12.50</translation>
    </message>
    <message>
        <source>a number</source>
        <translation>eine Zahl</translation>
    </message>
    <message>
        <source>Required</source>
        <translation>Pflichtfeld</translation>
    </message>
    <message>
        <source>As imported: {0}</source>
        <translation>Wie importiert: {0}</translation>
    </message>
</context>
<context>
    <name>ReleaseDialog</name>
    <message>
        <source>Release item</source>
        <translation>Eintrag freigeben</translation>
    </message>
    <message>
        <source>Give {0} back to the queue so someone else can take it.</source>
        <translation>{0} an die Warteschlange zurückgeben, damit jemand anderes übernehmen kann.</translation>
    </message>
    <message>
        <source>Your unsaved edits will be discarded.</source>
        <translation>Ihre ungespeicherten Änderungen werden verworfen.</translation>
    </message>
    <message>
        <source>&amp;Reason (pick one or type your own):</source>
        <translation>&amp;Grund (auswählen oder selbst eingeben):</translation>
    </message>
    <message>
        <source>&amp;Note for whoever takes it next (required):</source>
        <translation>&amp;Notiz für die nächste Bearbeitung (erforderlich):</translation>
    </message>
    <message>
        <source>&amp;Note for whoever takes it next (optional):</source>
        <translation>&amp;Notiz für die nächste Bearbeitung (optional):</translation>
    </message>
    <message>
        <source>Release</source>
        <translation>Freigeben</translation>
    </message>
</context>
<context>
    <name>ReopenDialog</name>
    <message>
        <source>Reopen</source>
        <translation>Wieder öffnen</translation>
    </message>
    <message>
        <source>Put {0} {1} back to waiting, with the queue&apos;s reopen values? It is served again in its place in the queue.</source>
        <translation>{0} {1} mit den Werten der Warteschlange für das Wiederöffnen zurück in die Warteschlange stellen? Der Eintrag wird an seinem Platz wieder ausgegeben.</translation>
    </message>
    <message>
        <source>required: kept in the item&apos;s history</source>
        <translation>erforderlich: bleibt im Verlauf des Eintrags</translation>
    </message>
    <message>
        <source>Give a reason: it goes into the item&apos;s history.</source>
        <translation>Nennen Sie einen Grund: Er kommt in den Verlauf des Eintrags.</translation>
    </message>
</context>
<context>
    <name>ResumePanel</name>
    <message>
        <source>Queue</source>
        <translation>Warteschlange</translation>
    </message>
    <message>
        <source>Item</source>
        <translation>Eintrag</translation>
    </message>
    <message>
        <source>Summary</source>
        <translation>Zusammenfassung</translation>
    </message>
    <message>
        <source>Held for</source>
        <translation>Gesperrt seit</translation>
    </message>
    <message>
        <source>Time left</source>
        <translation>Restzeit</translation>
    </message>
    <message>
        <source>Draft</source>
        <translation>Entwurf</translation>
    </message>
    <message>
        <source>Due</source>
        <translation>Fällig</translation>
    </message>
    <message>
        <source>Unfinished items</source>
        <translation>Unerledigte Einträge</translation>
    </message>
    <message>
        <source>&amp;Open</source>
        <translation>Ö&amp;ffnen</translation>
    </message>
    <message>
        <source>View &amp;draft…</source>
        <translation>Ent&amp;wurf ansehen…</translation>
    </message>
    <message>
        <source>&amp;Refresh</source>
        <translation>A&amp;ktualisieren</translation>
    </message>
    <message>
        <source>Nothing unfinished.</source>
        <translation>Nichts Unerledigtes.</translation>
    </message>
    <message>
        <source>You have 1 unfinished item: pick one to go straight back to it.</source>
        <translation>Sie haben 1 unerledigten Eintrag: Wählen Sie ihn aus, um direkt dorthin zurückzukehren.</translation>
    </message>
    <message>
        <source>You have {0} unfinished items: pick one to go straight back to it.</source>
        <translation>Sie haben {0} unerledigte Einträge: Wählen Sie einen aus, um direkt dorthin zurückzukehren.</translation>
    </message>
    <message>
        <source>lock gone</source>
        <translation>Sperre verloren</translation>
    </message>
    <message>
        <source>expired</source>
        <translation>abgelaufen</translation>
    </message>
    <message>
        <source>unsaved edits</source>
        <translation>ungespeicherte Änderungen</translation>
    </message>
</context>
<context>
    <name>ShortcutsDialog</name>
    <message>
        <source>Keyboard shortcuts</source>
        <translation>Tastenkürzel</translation>
    </message>
    <message>
        <source>Click a key and press the new combination; the × clears it. Tab and Shift+Tab move between fields; Enter opens the selected item in lists. In a note box, Ctrl+Return sends the note: beside the form it adds the note, in the Release, Defer and Complete dialogs it confirms the dialog.</source>
        <translation>Klicken Sie auf eine Taste und drücken Sie die neue Kombination; das × löscht sie. Tab und Umschalt+Tab wechseln zwischen den Feldern; Eingabe öffnet in Listen den gewählten Eintrag. In einem Notizfeld sendet Strg+Eingabe die Notiz: neben dem Formular fügt es die Notiz hinzu, in den Dialogen Freigeben, Zurückstellen und Abschließen bestätigt es den Dialog.</translation>
    </message>
    <message>
        <source>Keys</source>
        <translation>Tasten</translation>
    </message>
    <message>
        <source>Does</source>
        <translation>Wirkung</translation>
    </message>
    <message>
        <source>Keys for: {0}</source>
        <translation>Tasten für: {0}</translation>
    </message>
    <message>
        <source>the keys for {0}</source>
        <translation>Tasten für {0}</translation>
    </message>
    <message>
        <source>Single keys: N for Next item, 1 to 9 for the outcomes (only while the cursor is not in a text field)</source>
        <translation>Einzeltasten: N für Nächster Eintrag, 1 bis 9 für die Ergebnisse (nur wenn der Cursor nicht in einem Textfeld steht)</translation>
    </message>
</context>
<context>
    <name>SourcePane</name>
    <message>
        <source>Source</source>
        <translation>Quelle</translation>
    </message>
    <message>
        <source>Previous page</source>
        <translation>Vorige Seite</translation>
    </message>
    <message>
        <source>Next page</source>
        <translation>Nächste Seite</translation>
    </message>
    <message>
        <source>Zoom out</source>
        <translation>Verkleinern</translation>
    </message>
    <message>
        <source>Zoom in</source>
        <translation>Vergrößern</translation>
    </message>
    <message>
        <source>Fit</source>
        <translation>Einpassen</translation>
    </message>
    <message>
        <source>Fit to the pane&apos;s width</source>
        <translation>An die Breite des Bereichs anpassen</translation>
    </message>
    <message>
        <source>Source document</source>
        <translation>Quelldokument</translation>
    </message>
    <message>
        <source>Source image</source>
        <translation>Quellbild</translation>
    </message>
    <message>
        <source>Source text</source>
        <translation>Quelltext</translation>
    </message>
    <message>
        <source>No item is open.</source>
        <translation>Kein Eintrag ist geöffnet.</translation>
    </message>
    <message>
        <source>Loading the source…</source>
        <translation>Die Quelle wird geladen…</translation>
    </message>
    <message>
        <source>This item names no source.</source>
        <translation>Dieser Eintrag nennt keine Quelle.</translation>
    </message>
    <message>
        <source>The source cannot be shown: {0}</source>
        <translation>Die Quelle kann nicht angezeigt werden: {0}</translation>
    </message>
    <message>
        <source>The source cannot be shown: it is not a PDF this program can read.</source>
        <translation>Die Quelle kann nicht angezeigt werden: Sie ist kein PDF, das dieses Programm lesen kann.</translation>
    </message>
    <message>
        <source>The source cannot be shown: it is not an image this program can read.</source>
        <translation>Die Quelle kann nicht angezeigt werden: Sie ist kein Bild, das dieses Programm lesen kann.</translation>
    </message>
    <message>
        <source>Page {0} of {1}</source>
        <translation>Seite {0} von {1}</translation>
    </message>
</context>
<context>
    <name>Supervisor</name>
    <message>
        <source>(s)</source>
        <translation>(s)</translation>
    </message>
</context>
<context>
    <name>SupervisorWindow</name>
    <message>
        <source>Today</source>
        <translation>Heute</translation>
    </message>
    <message>
        <source>today</source>
        <translation>heute</translation>
    </message>
    <message>
        <source>Last 7 days</source>
        <translation>Letzte 7 Tage</translation>
    </message>
    <message>
        <source>last 7 days</source>
        <translation>letzte 7 Tage</translation>
    </message>
    <message>
        <source>Last 30 days</source>
        <translation>Letzte 30 Tage</translation>
    </message>
    <message>
        <source>last 30 days</source>
        <translation>letzte 30 Tage</translation>
    </message>
    <message>
        <source>workbench supervisor — {0}</source>
        <translation>workbench-Supervisor — {0}</translation>
    </message>
    <message>
        <source>All queues</source>
        <translation>Alle Warteschlangen</translation>
    </message>
    <message>
        <source>Filter by holder</source>
        <translation>Nach sperrender Person filtern</translation>
    </message>
    <message>
        <source> s</source>
        <translation> s</translation>
    </message>
    <message>
        <source>Refresh</source>
        <translation>Aktualisieren</translation>
    </message>
    <message>
        <source>Loading…</source>
        <translation>Wird geladen…</translation>
    </message>
    <message>
        <source>The period of the operators&apos; figures and the charts</source>
        <translation>Zeitraum der Bearbeiterzahlen und der Diagramme</translation>
    </message>
    <message>
        <source>Queue:</source>
        <translation>Warteschlange:</translation>
    </message>
    <message>
        <source>Period:</source>
        <translation>Zeitraum:</translation>
    </message>
    <message>
        <source>Refresh every</source>
        <translation>Aktualisieren alle</translation>
    </message>
    <message>
        <source>Lock board</source>
        <translation>Sperrenübersicht</translation>
    </message>
    <message>
        <source>Queue health</source>
        <translation>Zustand der Warteschlangen</translation>
    </message>
    <message>
        <source>Operators</source>
        <translation>Bearbeiter</translation>
    </message>
    <message>
        <source>Item history</source>
        <translation>Verlauf eines Eintrags</translation>
    </message>
    <message>
        <source>Charts</source>
        <translation>Diagramme</translation>
    </message>
    <message>
        <source>Escalated</source>
        <translation>An Supervisor übergeben</translation>
    </message>
    <message>
        <source>Force release…</source>
        <translation>Zwangsfreigabe…</translation>
    </message>
    <message>
        <source>Reassign…</source>
        <translation>Neu zuweisen…</translation>
    </message>
    <message>
        <source>History</source>
        <translation>Verlauf</translation>
    </message>
    <message>
        <source>Export CSV…</source>
        <translation>CSV exportieren…</translation>
    </message>
    <message>
        <source>Yellow: expires soon · Red: expired, back in the pool on the next claim</source>
        <translation>Gelb: läuft bald ab · Rot: abgelaufen, bei der nächsten Übernahme wieder frei</translation>
    </message>
    <message>
        <source>Queue</source>
        <translation>Warteschlange</translation>
    </message>
    <message>
        <source>Waiting</source>
        <translation>Wartend</translation>
    </message>
    <message>
        <source>Locked</source>
        <translation>Gesperrt</translation>
    </message>
    <message>
        <source>Expired locks</source>
        <translation>Abgelaufene Sperren</translation>
    </message>
    <message>
        <source>Completed today</source>
        <translation>Heute abgeschlossen</translation>
    </message>
    <message>
        <source>Oldest waiting</source>
        <translation>Am längsten wartend</translation>
    </message>
    <message>
        <source>Releases today</source>
        <translation>Freigaben heute</translation>
    </message>
    <message>
        <source>Overdue</source>
        <translation>Überfällig</translation>
    </message>
    <message>
        <source>the holder filter</source>
        <translation>Filter nach sperrender Person</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>Schließen</translation>
    </message>
    <message>
        <source>Expiries today</source>
        <translation>Abgelaufene Sperren heute</translation>
    </message>
    <message>
        <source>Force releases today</source>
        <translation>Zwangsfreigaben heute</translation>
    </message>
    <message>
        <source>Move waiting items…</source>
        <translation>Wartende Einträge verschieben…</translation>
    </message>
    <message>
        <source>Change a column of the selected queue&apos;s waiting items nobody holds, e.g. another category or tier</source>
        <translation>Eine Spalte der wartenden, von niemandem gehaltenen Einträge der gewählten Warteschlange ändern, z. B. eine andere Kategorie oder Stufe</translation>
    </message>
    <message>
        <source>Why items were released today:</source>
        <translation>Warum Einträge heute freigegeben wurden:</translation>
    </message>
    <message>
        <source>Reason</source>
        <translation>Grund</translation>
    </message>
    <message>
        <source>Times</source>
        <translation>Anzahl</translation>
    </message>
    <message>
        <source>Operator</source>
        <translation>Bearbeiter</translation>
    </message>
    <message>
        <source>Completed</source>
        <translation>Abgeschlossen</translation>
    </message>
    <message>
        <source>Median handle time</source>
        <translation>Median der Bearbeitungszeit</translation>
    </message>
    <message>
        <source>90th percentile</source>
        <translation>90. Perzentil</translation>
    </message>
    <message>
        <source>Releases</source>
        <translation>Freigaben</translation>
    </message>
    <message>
        <source>Expiries</source>
        <translation>Abgelaufene Sperren</translation>
    </message>
    <message>
        <source>Force-released</source>
        <translation>Zwangsfreigegeben</translation>
    </message>
    <message>
        <source>Accepted</source>
        <translation>Angenommen</translation>
    </message>
    <message>
        <source>Sent back</source>
        <translation>Zurückgeschickt</translation>
    </message>
    <message>
        <source>Of this operator&apos;s work reviewed in the period (a dash: the queue is not reviewed)</source>
        <translation>Von der im Zeitraum geprüften Arbeit dieser Person (ein Strich: die Warteschlange wird nicht geprüft)</translation>
    </message>
    <message>
        <source>Item key</source>
        <translation>Schlüssel des Eintrags</translation>
    </message>
    <message>
        <source>Show</source>
        <translation>Anzeigen</translation>
    </message>
    <message>
        <source>Reopen…</source>
        <translation>Wieder öffnen…</translation>
    </message>
    <message>
        <source>Put a finished item back to waiting (the queue&apos;s on_reopen values)</source>
        <translation>Einen erledigten Eintrag zurück in die Warteschlange stellen (die on_reopen-Werte der Warteschlange)</translation>
    </message>
    <message>
        <source>When</source>
        <translation>Wann</translation>
    </message>
    <message>
        <source>How often the tab shown is read again. The lock board shows claims and releases as they happen and counts the time left itself: it is read whole every {0}, or with Refresh.</source>
        <translation>Wie oft der gezeigte Reiter neu gelesen wird. Die Sperrenübersicht zeigt Übernahmen und Freigaben, sobald sie geschehen, und zählt die verbleibende Zeit selbst: Sie wird alle {0} ganz gelesen, oder mit Aktualisieren.</translation>
    </message>
    <message>
        <source>Item</source>
        <translation>Eintrag</translation>
    </message>
    <message>
        <source>Waiting for</source>
        <translation>Wartet auf</translation>
    </message>
    <message>
        <source>Escalated by</source>
        <translation>Übergeben von</translation>
    </message>
    <message>
        <source>Escalated items</source>
        <translation>An Supervisor übergebene Einträge</translation>
    </message>
    <message>
        <source>Whom the item was handed to: the queue&apos;s escalate_to group (and supervisors), or supervisors</source>
        <translation>An wen der Eintrag übergeben wurde: die Gruppe escalate_to der Warteschlange (und die Supervisoren) oder die Supervisoren</translation>
    </message>
    <message>
        <source>Take</source>
        <translation>Übernehmen</translation>
    </message>
    <message>
        <source>Take the selected item to work it: it is yours, with a fresh lock, as after a claim</source>
        <translation>Den gewählten Eintrag zur Bearbeitung übernehmen: er gehört Ihnen, mit einer neuen Sperre, wie nach dem Nehmen</translation>
    </message>
    <message>
        <source>{0} {1} is yours now: work it in the workbench window.</source>
        <translation>{0} {1} gehört jetzt Ihnen: bearbeiten Sie ihn im Workbench-Fenster.</translation>
    </message>
    <message>
        <source>Not taken: {0}</source>
        <translation>Nicht übernommen: {0}</translation>
    </message>
    <message>
        <source>Supervisors</source>
        <translation>Supervisoren</translation>
    </message>
    <message>
        <source>Event</source>
        <translation>Ereignis</translation>
    </message>
    <message>
        <source>By</source>
        <translation>Von</translation>
    </message>
    <message>
        <source>Holder</source>
        <translation>Gesperrt von</translation>
    </message>
    <message>
        <source>Reason / outcome</source>
        <translation>Grund / Ergebnis</translation>
    </message>
    <message>
        <source>Refreshed {0} ({1:.0f} ms)</source>
        <translation>Aktualisiert {0} ({1:.0f} ms)</translation>
    </message>
    <message>
        <source>Could not refresh: {0} — trying again in {1} s; the figures shown are from the last refresh</source>
        <translation>Aktualisieren fehlgeschlagen: {0} — neuer Versuch in {1} s; die angezeigten Zahlen stammen von der letzten Aktualisierung</translation>
    </message>
    <message>
        <source>Showing the oldest {0} of {1} locks: the board lists at most {2} per queue. Force release and reassign work on the locks shown; `workbench board QUEUE --limit N` lists more.</source>
        <translation>Angezeigt werden die ältesten {0} von {1} Sperren: Die Tafel listet höchstens {2} je Warteschlange. Freigeben und Neu zuweisen wirken auf die angezeigten Sperren; `workbench board QUEUE --limit N` listet mehr.</translation>
    </message>
    <message numerus="yes">
        <source>%n item(s) released.</source>
        <translation>
            <numerusform>%n Eintrag freigegeben.</numerusform>
            <numerusform>%n Einträge freigegeben.</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n item(s) reassigned to {0}.</source>
        <translation>
            <numerusform>%n Eintrag an {0} neu zugewiesen.</numerusform>
            <numerusform>%n Einträge an {0} neu zugewiesen.</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n not: see the message.</source>
        <translation>
            <numerusform>%n nicht: siehe Meldung.</numerusform>
            <numerusform>%n nicht: siehe Meldung.</numerusform>
        </translation>
    </message>
    <message>
        <source>These items had changed meanwhile:</source>
        <translation>Diese Einträge hatten sich inzwischen geändert:</translation>
    </message>
    <message>
        <source>Nothing more was done: {0}</source>
        <translation>Es wurde nichts weiter getan: {0}</translation>
    </message>
    <message>
        <source>Note</source>
        <translation>Notiz</translation>
    </message>
    <message numerus="yes">
        <source>%n event(s) for {0} {1}</source>
        <translation>
            <numerusform>%n Ereignis für {0} {1}</numerusform>
            <numerusform>%n Ereignisse für {0} {1}</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n note(s)</source>
        <translation>
            <numerusform>%n Notiz</numerusform>
            <numerusform>%n Notizen</numerusform>
        </translation>
    </message>
    <message>
        <source>Move waiting items</source>
        <translation>Wartende Einträge verschieben</translation>
    </message>
    <message>
        <source>Choose a queue first: select its row here, or pick it under Queue:.</source>
        <translation>Wählen Sie zuerst eine Warteschlange: ihre Zeile hier oder unter Warteschlange:.</translation>
    </message>
    <message numerus="yes">
        <source>%n waiting item(s) of {0} moved.</source>
        <translation>
            <numerusform>%n wartender Eintrag von {0} verschoben.</numerusform>
            <numerusform>%n wartende Einträge von {0} verschoben.</numerusform>
        </translation>
    </message>
    <message>
        <source>Nothing moved: {0}</source>
        <translation>Nichts verschoben: {0}</translation>
    </message>
    <message>
        <source>No waiting item nobody holds matches: nothing to move.</source>
        <translation>Kein freier wartender Eintrag passt: nichts zu verschieben.</translation>
    </message>
    <message numerus="yes">
        <source>Set {0} on %n waiting item(s) of {1}?</source>
        <translation>
            <numerusform>{0} bei %n wartendem Eintrag von {1} setzen?</numerusform>
            <numerusform>{0} bei %n wartenden Einträgen von {1} setzen?</numerusform>
        </translation>
    </message>
    <message>
        <source>Type the key of the item to reopen.</source>
        <translation>Geben Sie den Schlüssel des Eintrags ein, der wieder geöffnet werden soll.</translation>
    </message>
    <message>
        <source>{0} {1} waits again.</source>
        <translation>{0} {1} wartet wieder.</translation>
    </message>
    <message>
        <source>Not reopened: {0}</source>
        <translation>Nicht wieder geöffnet: {0}</translation>
    </message>
    <message>
        <source>Export CSV</source>
        <translation>CSV exportieren</translation>
    </message>
    <message>
        <source>CSV files (*.csv)</source>
        <translation>CSV-Dateien (*.csv)</translation>
    </message>
    <message numerus="yes">
        <source>Saved %n row(s) to {0}</source>
        <translation>
            <numerusform>%n Zeile in {0} gespeichert</numerusform>
            <numerusform>%n Zeilen in {0} gespeichert</numerusform>
        </translation>
    </message>
    <message>
        <source>Changes: relay</source>
        <translation>Änderungen: Relay</translation>
    </message>
    <message>
        <source>Relay unreachable — looking for changes itself</source>
        <translation>Relay nicht erreichbar — das Fenster sucht selbst nach Änderungen</translation>
    </message>
</context>
<context>
    <name>Theme</name>
    <message>
        <source>&amp;As the system</source>
        <translation>&amp;Wie das System</translation>
    </message>
    <message>
        <source>&amp;Light</source>
        <translation>&amp;Hell</translation>
    </message>
    <message>
        <source>&amp;Dark</source>
        <translation>&amp;Dunkel</translation>
    </message>
    <message>
        <source>&amp;High contrast</source>
        <translation>Hoher &amp;Kontrast</translation>
    </message>
</context>
<context>
    <name>Times</name>
    <message>
        <source>overdue by {0}</source>
        <translation>{0} überfällig</translation>
    </message>
    <message>
        <source>in {0}</source>
        <translation>in {0}</translation>
    </message>
</context>
<context>
    <name>_ReasonDialog</name>
    <message>
        <source>required: the holder is shown it</source>
        <translation>Pflichtfeld: Wer die Sperre hält, bekommt ihn angezeigt</translation>
    </message>
    <message>
        <source>&amp;Reason:</source>
        <translation>&amp;Grund:</translation>
    </message>
    <message>
        <source>Give a reason: the holder sees it, and it goes into the history.</source>
        <translation>Geben Sie einen Grund an: Wer die Sperre hält, sieht ihn, und er wird im Verlauf festgehalten.</translation>
    </message>
</context>
</TS>
