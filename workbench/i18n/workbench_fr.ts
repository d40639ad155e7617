<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="fr">
<context>
    <name>A11y</name>
    <message>
        <source>Clear {0}</source>
        <translation>Effacer {0}</translation>
    </message>
</context>
<context>
    <name>BoardModel</name>
    <message>
        <source>Queue</source>
        <translation>File</translation>
    </message>
    <message>
        <source>Item</source>
        <translation>Élément</translation>
    </message>
    <message>
        <source>Summary</source>
        <translation>Résumé</translation>
    </message>
    <message>
        <source>Holder</source>
        <translation>Détenteur</translation>
    </message>
    <message>
        <source>Claimed at</source>
        <translation>Pris à</translation>
    </message>
    <message>
        <source>Age</source>
        <translation>Âge</translation>
    </message>
    <message>
        <source>Time left</source>
        <translation>Temps restant</translation>
    </message>
    <message>
        <source>Idle</source>
        <translation>Inactif</translation>
    </message>
    <message>
        <source>Extended</source>
        <translation>Prolongé</translation>
    </message>
    <message>
        <source>Due</source>
        <translation>Échéance</translation>
    </message>
    <message>
        <source>expires {0}; last saved or extended {1}</source>
        <translation>expire le {0} ; dernier enregistrement ou prolongation à {1}</translation>
    </message>
    <message>
        <source>expired {0} ago</source>
        <translation>expiré depuis {0}</translation>
    </message>
    <message>
        <source>{0} (another program)</source>
        <translation>{0} (autre programme)</translation>
    </message>
    <message>
        <source>Held by another program under the name {0} since {1}: workbench did not take this lock and does not hand the item out before it expires ({2}). Force release frees it now, with a reason kept in the item&apos;s history; do so only when that program no longer works on it.</source>
        <translation>Détenu par un autre programme sous le nom {0} depuis {1} : workbench n’a pas posé ce verrou et ne distribue pas l’élément avant son expiration ({2}). La libération forcée le libère tout de suite, avec un motif conservé dans l’historique de l’élément ; à faire seulement quand ce programme n’y travaille plus.</translation>
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
        <translation>Graphique : pris et terminés par heure</translation>
    </message>
    <message>
        <source>Chart: open items</source>
        <translation>Graphique : éléments ouverts</translation>
    </message>
    <message>
        <source>Chart: handle time</source>
        <translation>Graphique : temps de traitement</translation>
    </message>
    <message>
        <source>Claimed and completed per hour — {0}</source>
        <translation>Pris et terminés par heure — {0}</translation>
    </message>
    <message>
        <source>Claimed</source>
        <translation>Pris</translation>
    </message>
    <message>
        <source>Completed</source>
        <translation>Terminés</translation>
    </message>
    <message>
        <source>Open items — set the queue&apos;s `created` column to see them</source>
        <translation>Éléments ouverts — définissez la colonne `created` de la file pour les voir</translation>
    </message>
    <message>
        <source>Open items (waiting or in progress) — {0}</source>
        <translation>Ouverts (en attente ou en cours) — {0}</translation>
    </message>
    <message>
        <source>Open</source>
        <translation>Ouverts</translation>
    </message>
    <message numerus="yes">
        <source>Handle time, claim to complete — %n item(s)</source>
        <translation>
            <numerusform>Durée de traitement — %n élément</numerusform>
            <numerusform>Durée de traitement — %n éléments</numerusform>
        </translation>
    </message>
    <message>
        <source>Items</source>
        <translation>Éléments</translation>
    </message>
    <message>
        <source>minutes</source>
        <translation>minutes</translation>
    </message>
</context>
<context>
    <name>ConnectionDialog</name>
    <message>
        <source>PyMySQL (built in)</source>
        <translation>PyMySQL (intégré)</translation>
    </message>
    <message>
        <source>ODBC driver</source>
        <translation>Pilote ODBC</translation>
    </message>
    <message>
        <source>Connect to a database</source>
        <translation>Se connecter à une base de données</translation>
    </message>
    <message>
        <source>Connection: {0}</source>
        <translation>Connexion : {0}</translation>
    </message>
    <message>
        <source>workbench works a queue of records in your organisation&apos;s database. Describe the connection once; your IT department can tell you the server and database names.</source>
        <translation>workbench traite une file d&apos;enregistrements dans la base de données de votre organisation. Décrivez la connexion une fois ; votre service informatique peut vous indiquer les noms du serveur et de la base.</translation>
    </message>
    <message>
        <source>e.g. Helpdesk (office)</source>
        <translation>p. ex. Assistance (bureau)</translation>
    </message>
    <message>
        <source>Profile &amp;name:</source>
        <translation>&amp;Nom du profil :</translation>
    </message>
    <message>
        <source>&amp;Database:</source>
        <translation>&amp;Base de données :</translation>
    </message>
    <message>
        <source>server name or address</source>
        <translation>nom ou adresse du serveur</translation>
    </message>
    <message>
        <source>Port:</source>
        <translation>Port :</translation>
    </message>
    <message>
        <source>&amp;Server:</source>
        <translation>&amp;Serveur :</translation>
    </message>
    <message>
        <source>database name</source>
        <translation>nom de la base</translation>
    </message>
    <message>
        <source>Database na&amp;me:</source>
        <translation>No&amp;m de la base :</translation>
    </message>
    <message>
        <source>Log in with my &amp;Windows account</source>
        <translation>Se connecter avec mon compte &amp;Windows</translation>
    </message>
    <message>
        <source>database login</source>
        <translation>identifiant de la base</translation>
    </message>
    <message>
        <source>&amp;User:</source>
        <translation>&amp;Utilisateur :</translation>
    </message>
    <message>
        <source>&amp;Remember in the OS password store</source>
        <translation>&amp;Retenir dans le trousseau du système</translation>
    </message>
    <message>
        <source>&amp;Password:</source>
        <translation>Mot de &amp;passe :</translation>
    </message>
    <message>
        <source>Dri&amp;ver:</source>
        <translation>Pi&amp;lote :</translation>
    </message>
    <message>
        <source>&amp;ODBC driver:</source>
        <translation>Pilote &amp;ODBC :</translation>
    </message>
    <message>
        <source>&amp;Encrypt the connection</source>
        <translation>C&amp;hiffrer la connexion</translation>
    </message>
    <message>
        <source>Security:</source>
        <translation>Sécurité :</translation>
    </message>
    <message>
        <source>the .db file</source>
        <translation>le fichier .db</translation>
    </message>
    <message>
        <source>SQLite database file</source>
        <translation>Fichier de base de données SQLite</translation>
    </message>
    <message>
        <source>&amp;File:</source>
        <translation>&amp;Fichier :</translation>
    </message>
    <message>
        <source>From a queue &amp;config file:</source>
        <translation>Depuis un fichier de &amp;configuration :</translation>
    </message>
    <message>
        <source>Queue settings:</source>
        <translation>Réglages :</translation>
    </message>
    <message>
        <source>Details</source>
        <translation>Détails</translation>
    </message>
    <message>
        <source>Show the database&apos;s own message</source>
        <translation>Afficher le message de la base de données</translation>
    </message>
    <message>
        <source>&amp;Test connection</source>
        <translation>&amp;Tester la connexion</translation>
    </message>
    <message>
        <source>Browse…</source>
        <translation>Parcourir…</translation>
    </message>
    <message>
        <source>no ODBC driver is installed</source>
        <translation>aucun pilote ODBC n&apos;est installé</translation>
    </message>
    <message>
        <source>SQLite database</source>
        <translation>Base SQLite</translation>
    </message>
    <message>
        <source>SQLite databases (*.db *.sqlite *.sqlite3);;All files (*)</source>
        <translation>Bases SQLite (*.db *.sqlite *.sqlite3);;Tous les fichiers (*)</translation>
    </message>
    <message>
        <source>Queue config file</source>
        <translation>Fichier de configuration des files</translation>
    </message>
    <message>
        <source>workbench config (*.toml);;All files (*)</source>
        <translation>Configuration workbench (*.toml);;Tous les fichiers (*)</translation>
    </message>
    <message>
        <source>another profile has this name; choose another</source>
        <translation>un autre profil porte ce nom ; choisissez-en un autre</translation>
    </message>
    <message>
        <source>there is no file {0}</source>
        <translation>le fichier {0} n&apos;existe pas</translation>
    </message>
    <message>
        <source>Testing the connection to {0}…</source>
        <translation>Test de la connexion à {0}…</translation>
    </message>
    <message>
        <source>Profile name</source>
        <translation>Nom du profil</translation>
    </message>
    <message>
        <source>Database</source>
        <translation>Base de données</translation>
    </message>
    <message>
        <source>Server</source>
        <translation>Serveur</translation>
    </message>
    <message>
        <source>Port</source>
        <translation>Port</translation>
    </message>
    <message>
        <source>Trust the server&apos;s certi&amp;ficate (self-signed)</source>
        <translation>&amp;Faire confiance au certificat du serveur (auto-signé)</translation>
    </message>
    <message>
        <source>Pu&amp;blished in the database by a supervisor</source>
        <translation>Publiés &amp;dans la base par un superviseur</translation>
    </message>
    <message>
        <source>Open the demo &amp;instead</source>
        <translation>Ou&amp;vrir la démo</translation>
    </message>
    <message>
        <source>S&amp;ave and connect</source>
        <translation>&amp;Enregistrer et se connecter</translation>
    </message>
    <message>
        <source>“Details” shows the database&apos;s own message.</source>
        <translation>« Détails » montre le message de la base de données.</translation>
    </message>
    <message>
        <source>The test itself failed; Details shows the error.</source>
        <translation>Le test lui-même a échoué ; Détails indique l&apos;erreur.</translation>
    </message>
    <message>
        <source>Database name</source>
        <translation>Nom de la base</translation>
    </message>
    <message>
        <source>User</source>
        <translation>Utilisateur</translation>
    </message>
    <message>
        <source>File</source>
        <translation>Fichier</translation>
    </message>
    <message>
        <source>Windows account</source>
        <translation>Compte Windows</translation>
    </message>
    <message>
        <source>Queue settings</source>
        <translation>Réglages des files</translation>
    </message>
    <message>
        <source>Driver</source>
        <translation>Pilote</translation>
    </message>
    <message>
        <source>Kept in {0}; never written to a file.</source>
        <translation>Conservé dans {0} ; jamais écrit dans un fichier.</translation>
    </message>
    <message>
        <source>Cannot remember it here: asked each time</source>
        <translation>Impossible de le retenir ici : demandé à chaque fois</translation>
    </message>
    <message>
        <source>no OS password store (Windows Credential Manager, macOS Keychain or a Secret Service such as GNOME Keyring) is available on this computer</source>
        <translation>aucun coffre à mots de passe du système (Gestionnaire d’identification Windows, trousseau macOS ou un Secret Service comme GNOME Keyring) n’est disponible sur cet ordinateur</translation>
    </message>
    <message>
        <source>Not remembered: {0}. The password is never written to a file.</source>
        <translation>Non retenu : {0}. Le mot de passe n&apos;est jamais écrit dans un fichier.</translation>
    </message>
</context>
<context>
    <name>Crash</name>
    <message>
        <source>Something went wrong inside workbench. Edits already written to the local journal are kept; if the window warns that the journal cannot be written, Save your edits before closing.

Details are in {log}.</source>
        <translation>Une erreur s&apos;est produite dans workbench. Les modifications déjà écrites dans le journal local sont conservées ; si la fenêtre signale que le journal ne peut pas être écrit, enregistrez vos modifications avant de fermer.

Les détails sont dans {log}.</translation>
    </message>
    <message>
        <source>workbench: unexpected error</source>
        <translation>workbench : erreur inattendue</translation>
    </message>
</context>
<context>
    <name>DeferDialog</name>
    <message>
        <source>Defer item</source>
        <translation>Reporter l’élément</translation>
    </message>
    <message>
        <source>Put {0} aside until a time: nobody is given it before, then it comes first, to you for a while.</source>
        <translation>Mettre {0} de côté jusqu’à une heure donnée : personne ne le reçoit avant, puis il passe en premier, d’abord à vous pendant un moment.</translation>
    </message>
    <message>
        <source>Your unsaved edits will be discarded.</source>
        <translation>Vos modifications non enregistrées seront supprimées.</translation>
    </message>
    <message>
        <source>&amp;Until:</source>
        <translation>&amp;Jusqu’à :</translation>
    </message>
    <message>
        <source>Until</source>
        <translation>Jusqu’à</translation>
    </message>
    <message>
        <source>In 1 hour</source>
        <translation>Dans 1 heure</translation>
    </message>
    <message>
        <source>Tomorrow 9:00</source>
        <translation>Demain 9:00</translation>
    </message>
    <message>
        <source>Monday 9:00</source>
        <translation>Lundi 9:00</translation>
    </message>
    <message>
        <source>&amp;Reason (pick one or type your own):</source>
        <translation>&amp;Motif (choisissez-en un ou saisissez le vôtre) :</translation>
    </message>
    <message>
        <source>&amp;Note for whoever takes it next (required):</source>
        <translation>&amp;Note pour la personne suivante (obligatoire) :</translation>
    </message>
    <message>
        <source>&amp;Note for whoever takes it next (optional):</source>
        <translation>&amp;Note pour la personne suivante (facultative) :</translation>
    </message>
    <message>
        <source>Defer</source>
        <translation>Reporter</translation>
    </message>
    <message>
        <source>Choose a time still to come.</source>
        <translation>Choisissez une heure à venir.</translation>
    </message>
    <message>
        <source>Say why, for the history (pick a reason or type one).</source>
        <translation>Indiquez le motif pour l’historique (choisissez-en un ou saisissez-le).</translation>
    </message>
    <message>
        <source>This queue needs a note with a defer.</source>
        <translation>Cette file exige une note pour un report.</translation>
    </message>
</context>
<context>
    <name>DraftAccess</name>
    <message>
        <source>There is no kept draft of {0}.</source>
        <translation>Il n&apos;y a pas de brouillon conservé de {0}.</translation>
    </message>
    <message>
        <source>Copied to the clipboard.</source>
        <translation>Copié dans le presse-papiers.</translation>
    </message>
</context>
<context>
    <name>DraftDialog</name>
    <message>
        <source>Your draft of {0}</source>
        <translation>Votre brouillon de {0}</translation>
    </message>
    <message>
        <source>Unsaved edits of {0}, last change {1} (read-only; only changed fields are listed).</source>
        <translation>Modifications non enregistrées de {0}, dernière modification {1} (lecture seule ; seuls les champs modifiés sont listés).</translation>
    </message>
    <message>
        <source>Reading the item from the database…</source>
        <translation>Lecture de l&apos;élément dans la base…</translation>
    </message>
    <message>
        <source>Field</source>
        <translation>Champ</translation>
    </message>
    <message>
        <source>Your draft</source>
        <translation>Votre brouillon</translation>
    </message>
    <message>
        <source>When you started</source>
        <translation>Quand vous avez commencé</translation>
    </message>
    <message>
        <source>In the database now</source>
        <translation>Actuellement dans la base</translation>
    </message>
    <message>
        <source>reading…</source>
        <translation>lecture…</translation>
    </message>
    <message>
        <source>Your draft beside the values when you started and now</source>
        <translation>Votre brouillon à côté des valeurs de départ et actuelles</translation>
    </message>
    <message>
        <source>&amp;Copy as text</source>
        <translation>&amp;Copier en texte</translation>
    </message>
    <message>
        <source>&amp;Discard draft…</source>
        <translation>&amp;Supprimer le brouillon…</translation>
    </message>
    <message>
        <source>(unknown)</source>
        <translation>(inconnu)</translation>
    </message>
</context>
<context>
    <name>DraftView</name>
    <message>
        <source>you hold it (until {0})</source>
        <translation>vous le détenez (jusqu&apos;à {0})</translation>
    </message>
    <message>
        <source>{0} holds it since {1} (until {2})</source>
        <translation>{0} le détient depuis {1} (jusqu&apos;à {2})</translation>
    </message>
    <message>
        <source>your lock on it has run out: it is free to claim</source>
        <translation>votre verrou a expiré : il peut être repris</translation>
    </message>
    <message>
        <source>{0}&apos;s lock on it has run out: it is free to claim</source>
        <translation>le verrou de {0} a expiré : il peut être pris</translation>
    </message>
    <message>
        <source>nobody holds it: it is free to claim</source>
        <translation>personne ne le détient : il peut être pris</translation>
    </message>
    <message>
        <source>it is finished ({0})</source>
        <translation>il est terminé ({0})</translation>
    </message>
    <message>
        <source>it is not waiting to be worked on</source>
        <translation>il n&apos;est pas en attente de traitement</translation>
    </message>
    <message>
        <source>an unknown time</source>
        <translation>une heure inconnue</translation>
    </message>
    <message>
        <source>Lock lost: your lock on {0} expired at {1}</source>
        <translation>Verrou perdu : votre verrou sur {0} a expiré à {1}</translation>
    </message>
    <message>
        <source>Lock lost: {0} was completed by {1} at {2}</source>
        <translation>Verrou perdu : {0} a été terminé par {1} à {2}</translation>
    </message>
    <message>
        <source>Lock lost: {0} was released by {1} at {2}</source>
        <translation>Verrou perdu : {0} a été libéré par {1} à {2}</translation>
    </message>
    <message>
        <source>Lock lost: supervisor {0} released {1} at {2}</source>
        <translation>Verrou perdu : le superviseur {0} a libéré {1} à {2}</translation>
    </message>
    <message>
        <source>Lock lost: supervisor {0} gave {1} to {2} at {3}</source>
        <translation>Verrou perdu : le superviseur {0} a confié {1} à {2} à {3}</translation>
    </message>
    <message>
        <source>Lock lost: supervisor {0} gave {1} to someone else at {2}</source>
        <translation>Verrou perdu : le superviseur {0} a confié {1} à quelqu’un d’autre à {2}</translation>
    </message>
    <message>
        <source>Lock lost: you no longer hold a lock on {0}</source>
        <translation>Verrou perdu : vous ne détenez plus de verrou sur {0}</translation>
    </message>
    <message>
        <source>(reason: {0})</source>
        <translation>(motif : {0})</translation>
    </message>
    <message>
        <source>You hold it now, under another lock.</source>
        <translation>Vous le détenez maintenant vous-même, sous un autre verrou.</translation>
    </message>
    <message>
        <source>{0} holds it now.</source>
        <translation>{0} le détient maintenant.</translation>
    </message>
    <message>
        <source>Nobody has taken it since: you can claim it again to continue.</source>
        <translation>Personne ne l’a pris depuis : vous pouvez le reprendre pour continuer.</translation>
    </message>
    <message>
        <source>Nobody holds it now.</source>
        <translation>Personne ne le détient maintenant.</translation>
    </message>
    <message>
        <source>who holds it is not known: {0}</source>
        <translation>on ne sait pas qui le détient : {0}</translation>
    </message>
    <message>
        <source>Now (checked {0}): {1}.</source>
        <translation>Maintenant (vérifié à {0}) : {1}.</translation>
    </message>
    <message>
        <source>Unsaved edits of {0} by {1}, last change {2}</source>
        <translation>Modifications non enregistrées de {0} par {1}, dernière modification {2}</translation>
    </message>
    <message>
        <source>your draft</source>
        <translation>votre brouillon</translation>
    </message>
    <message>
        <source>when you started</source>
        <translation>quand vous avez commencé</translation>
    </message>
    <message>
        <source>in the database now</source>
        <translation>actuellement dans la base</translation>
    </message>
    <message>
        <source>(empty)</source>
        <translation>(vide)</translation>
    </message>
    <message>
        <source>Discard your edits?</source>
        <translation>Supprimer vos modifications ?</translation>
    </message>
    <message>
        <source>Your unsaved edits to {0} will be thrown away. This cannot be undone.</source>
        <translation>Vos modifications non enregistrées de {0} seront supprimées. Cette action est irréversible.</translation>
    </message>
</context>
<context>
    <name>Durations</name>
    <message>
        <source>{0}d{1}h</source>
        <translation>{0} j {1} h</translation>
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
        <translation>{0} j</translation>
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
        <translation>{0} pose un problème ; Détails indique quoi corriger.</translation>
    </message>
    <message>
        <source>The configuration has a problem; Details says what to fix.</source>
        <translation>La configuration pose un problème ; Détails indique quoi corriger.</translation>
    </message>
    <message>
        <source>The password could not be kept in this computer&apos;s password store.</source>
        <translation>Le mot de passe n’a pas pu être conservé dans le trousseau de cet ordinateur.</translation>
    </message>
    <message>
        <source>The database cannot be reached; Details has the database&apos;s own words.</source>
        <translation>La base de données est injoignable ; Détails donne son propre message.</translation>
    </message>
    <message>
        <source>This login may not do that; Details says who can grant it.</source>
        <translation>Cette connexion n’a pas ce droit ; Détails indique qui peut l’accorder.</translation>
    </message>
    <message>
        <source>That cannot be done as asked; Details says why.</source>
        <translation>Impossible de le faire ainsi ; Détails indique pourquoi.</translation>
    </message>
    <message>
        <source>That could not be done; Details says why.</source>
        <translation>Cela n’a pas pu être fait ; Détails indique pourquoi.</translation>
    </message>
</context>
<context>
    <name>EscalationsDialog</name>
    <message>
        <source>Items you escalated</source>
        <translation>Éléments que vous avez confiés</translation>
    </message>
    <message>
        <source>You have not handed any item of this queue to a supervisor.</source>
        <translation>Vous n’avez confié aucun élément de cette file à un superviseur.</translation>
    </message>
    <message>
        <source>Waiting for a supervisor</source>
        <translation>En attente d’un superviseur</translation>
    </message>
    <message>
        <source>Item</source>
        <translation>Élément</translation>
    </message>
    <message>
        <source>When</source>
        <translation>Quand</translation>
    </message>
    <message>
        <source>Reason</source>
        <translation>Motif</translation>
    </message>
    <message>
        <source>What became of it</source>
        <translation>Ce qu’il est devenu</translation>
    </message>
</context>
<context>
    <name>Events</name>
    <message>
        <source>Claimed</source>
        <translation>Pris</translation>
    </message>
    <message>
        <source>Saved</source>
        <translation>Enregistré</translation>
    </message>
    <message>
        <source>Extended</source>
        <translation>Prolongé</translation>
    </message>
    <message>
        <source>Released</source>
        <translation>Rendu</translation>
    </message>
    <message>
        <source>Expired</source>
        <translation>Expiré</translation>
    </message>
    <message>
        <source>Force-released</source>
        <translation>Libéré de force</translation>
    </message>
    <message>
        <source>Reassigned</source>
        <translation>Réattribué</translation>
    </message>
    <message>
        <source>Completed</source>
        <translation>Terminé</translation>
    </message>
    <message>
        <source>Deferred</source>
        <translation>Reporté</translation>
    </message>
    <message>
        <source>Escalated</source>
        <translation>Confié à un superviseur</translation>
    </message>
    <message>
        <source>Reopened</source>
        <translation>Rouvert</translation>
    </message>
    <message>
        <source>Completion undone</source>
        <translation>Clôture annulée</translation>
    </message>
    <message>
        <source>Moved</source>
        <translation>Déplacé</translation>
    </message>
    <message>
        <source>Expired (cleared by {0}&apos;s sweep)</source>
        <translation>Expiré (libéré par le nettoyage de {0})</translation>
    </message>
    <message>
        <source>Expired (noticed when {0} claimed it)</source>
        <translation>Expiré (constaté quand {0} l’a pris)</translation>
    </message>
    <message>
        <source>Reassigned to {0}</source>
        <translation>Réattribué à {0}</translation>
    </message>
    <message>
        <source>Locked to {0} (reassigned from {1})</source>
        <translation>Verrouillé pour {0} (réattribué depuis {1})</translation>
    </message>
</context>
<context>
    <name>ForceReleaseDialog</name>
    <message numerus="yes">
        <source>Take %n item(s) away from {0} and put them back in the queue?</source>
        <translation>
            <numerusform>Retirer %n élément à {0} et le remettre dans la file ?</numerusform>
            <numerusform>Retirer %n éléments à {0} et les remettre dans la file ?</numerusform>
        </translation>
    </message>
    <message>
        <source>Their windows say who did it and why within a few seconds; unsaved edits stay with them as a draft.</source>
        <translation>Leurs fenêtres indiquent en quelques secondes qui l&apos;a fait et pourquoi ; les modifications non enregistrées leur restent sous forme de brouillon.</translation>
    </message>
    <message>
        <source>Force release</source>
        <translation>Libération forcée</translation>
    </message>
    <message>
        <source>Held by another program (under {0}): workbench did not take these locks, and that program is not told. Release them only when it no longer works on them.</source>
        <translation>Détenus par un autre programme (sous {0}) : workbench n’a pas posé ces verrous, et ce programme n’en est pas averti. Ne les libérez que quand il n’y travaille plus.</translation>
    </message>
    <message numerus="yes">
        <source>Force release %n item(s)</source>
        <translation>
            <numerusform>Libérer de force %n élément</numerusform>
            <numerusform>Libérer de force %n éléments</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>Hotkeys</name>
    <message>
        <source>Next item: claim the next waiting item</source>
        <translation>Élément suivant : prendre le prochain élément en attente</translation>
    </message>
    <message>
        <source>&amp;Next item</source>
        <translation>Élément &amp;suivant</translation>
    </message>
    <message>
        <source>Save your edits and keep the item</source>
        <translation>Enregistrer vos modifications et garder l&apos;élément</translation>
    </message>
    <message>
        <source>&amp;Save</source>
        <translation>&amp;Enregistrer</translation>
    </message>
    <message>
        <source>Complete the item (the queue&apos;s first outcome)</source>
        <translation>Terminer l&apos;élément (premier résultat de la file)</translation>
    </message>
    <message>
        <source>&amp;Complete</source>
        <translation>&amp;Terminer</translation>
    </message>
    <message>
        <source>Release the item back to the queue, with a reason</source>
        <translation>Rendre l&apos;élément à la file, avec un motif</translation>
    </message>
    <message>
        <source>&amp;Release…</source>
        <translation>&amp;Libérer…</translation>
    </message>
    <message>
        <source>Undo your last Complete (within the queue&apos;s undo time)</source>
        <translation>Annuler votre dernière clôture (dans le délai de la file)</translation>
    </message>
    <message>
        <source>&amp;Undo Complete</source>
        <translation>Annuler la &amp;clôture</translation>
    </message>
    <message>
        <source>Defer the item until a time (it comes back first then)</source>
        <translation>Reporter l’élément jusqu’à une heure (il revient alors en premier)</translation>
    </message>
    <message>
        <source>&amp;Defer…</source>
        <translation>&amp;Reporter…</translation>
    </message>
    <message>
        <source>Hand the item to a supervisor, with a reason</source>
        <translation>Confier l’élément à un superviseur, avec un motif</translation>
    </message>
    <message>
        <source>Esc&amp;alate…</source>
        <translation>Confier à un s&amp;uperviseur…</translation>
    </message>
    <message>
        <source>Extend your lock</source>
        <translation>Prolonger votre verrou</translation>
    </message>
    <message>
        <source>E&amp;xtend lock</source>
        <translation>&amp;Prolonger le verrou</translation>
    </message>
    <message>
        <source>Check the lock now and refresh your list</source>
        <translation>Vérifier le verrou maintenant et actualiser votre liste</translation>
    </message>
    <message>
        <source>Chec&amp;k lock now</source>
        <translation>&amp;Vérifier le verrou</translation>
    </message>
    <message>
        <source>Show your unfinished items</source>
        <translation>Afficher vos éléments inachevés</translation>
    </message>
    <message>
        <source>Your &amp;unfinished items</source>
        <translation>Éléments &amp;inachevés</translation>
    </message>
    <message>
        <source>Pick a specific waiting item</source>
        <translation>Choisir un élément en attente précis</translation>
    </message>
    <message>
        <source>&amp;Pick an item…</source>
        <translation>&amp;Choisir un élément…</translation>
    </message>
    <message>
        <source>Choose the queue</source>
        <translation>Choisir la file</translation>
    </message>
    <message>
        <source>Choose the &amp;queue</source>
        <translation>Choisir la &amp;file</translation>
    </message>
    <message>
        <source>Keyboard shortcuts: see and change them</source>
        <translation>Raccourcis clavier : les voir et les modifier</translation>
    </message>
    <message>
        <source>&amp;Keyboard shortcuts…</source>
        <translation>&amp;Raccourcis clavier…</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>&amp;Quitter</translation>
    </message>
    <message>
        <source>Complete with the queue&apos;s outcome {0}</source>
        <translation>Terminer avec le résultat {0} de la file</translation>
    </message>
    <message>
        <source>Complete with the queue&apos;s outcome {0} (here: “{1}”)</source>
        <translation>Terminer avec le résultat {0} de la file (ici : « {1} »)</translation>
    </message>
    <message>
        <source>{0}: use one key combination.</source>
        <translation>{0} : une seule combinaison de touches.</translation>
    </message>
    <message>
        <source>{0} is needed for moving and editing in the form; choose another key.</source>
        <translation>{0} sert à se déplacer et à modifier dans le formulaire ; choisissez une autre touche.</translation>
    </message>
    <message>
        <source>{0} opens the menu “{1}”; choose another key.</source>
        <translation>{0} ouvre le menu « {1} » ; choisissez une autre touche.</translation>
    </message>
    <message>
        <source>{0} is the fixed key of “{1}”; choose another key.</source>
        <translation>{0} est la touche fixe de « {1} » ; choisissez une autre touche.</translation>
    </message>
    <message>
        <source>{0} alone would be typed into the fields; add Ctrl or Alt, or use a function key (single keys: see the option below).</source>
        <translation>{0} seule serait saisie dans les champs ; ajoutez Ctrl ou Alt, ou utilisez une touche de fonction (touches simples : voir l’option ci-dessous).</translation>
    </message>
    <message>
        <source>{0} is set for both “{1}” and “{2}”.</source>
        <translation>{0} est attribuée à la fois à « {1} » et à « {2} ».</translation>
    </message>
    <message>
        <source>Quit (gives back an untouched item; asks about one you worked on)</source>
        <translation>Quitter (rend un élément non modifié ; demande pour un élément travaillé)</translation>
    </message>
</context>
<context>
    <name>ItemLogPanel</name>
    <message>
        <source>Notes and history</source>
        <translation>Notes et historique</translation>
    </message>
    <message>
        <source>Notes and history of this item</source>
        <translation>Notes et historique de cet élément</translation>
    </message>
    <message>
        <source>&amp;New note:</source>
        <translation>&amp;Nouvelle note :</translation>
    </message>
    <message>
        <source>For whoever works this item next…</source>
        <translation>Pour la personne qui traitera cet élément ensuite…</translation>
    </message>
    <message>
        <source>New note</source>
        <translation>Nouvelle note</translation>
    </message>
    <message>
        <source>Add note</source>
        <translation>Ajouter la note</translation>
    </message>
    <message>
        <source>{0} wrote, {1}:</source>
        <translation>{0} a écrit, {1} :</translation>
    </message>
    <message>
        <source>{0} by {1}, {2}</source>
        <translation>{0} par {1}, {2}</translation>
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
        <translation>Le dossier du journal local {dir} est inutilisable ({reason}).</translation>
    </message>
    <message>
        <source>The local journal folder {dir} cannot be read ({reason}).</source>
        <translation>Le dossier du journal local {dir} est illisible ({reason}).</translation>
    </message>
    <message>
        <source>Your unsaved edits cannot be written to the local journal in {dir} ({reason}).</source>
        <translation>Vos modifications non enregistrées ne peuvent pas être écrites dans le journal local de {dir} ({reason}).</translation>
    </message>
    <message>
        <source>A draft that is already saved cannot be removed from the local journal in {dir} ({reason}).</source>
        <translation>Un brouillon déjà enregistré ne peut pas être retiré du journal local de {dir} ({reason}).</translation>
    </message>
    <message>
        <source>Free some disk space</source>
        <translation>Libérez de l&apos;espace disque</translation>
    </message>
    <message>
        <source>Make that folder writable</source>
        <translation>Rendez ce dossier accessible en écriture</translation>
    </message>
    <message>
        <source>Remove or rename the file that stands where that folder (or one above it) should be</source>
        <translation>Supprimez ou renommez le fichier qui se trouve là où ce dossier (ou un dossier parent) devrait être</translation>
    </message>
    <message>
        <source>Check that disk</source>
        <translation>Vérifiez ce disque</translation>
    </message>
    <message>
        <source>Save and Complete still store your edits in the database; until then they are only in this window and would be lost if workbench or the computer stopped.</source>
        <translation>Enregistrer et Terminer stockent toujours vos modifications dans la base ; d&apos;ici là, elles n&apos;existent que dans cette fenêtre et seraient perdues si workbench ou l&apos;ordinateur s&apos;arrêtait.</translation>
    </message>
    <message>
        <source>{advice}; workbench tries again on its own.</source>
        <translation>{advice} ; workbench réessaie de lui-même.</translation>
    </message>
    <message>
        <source>Try again now</source>
        <translation>Réessayer maintenant</translation>
    </message>
    <message>
        <source>Unsaved edits would be lost</source>
        <translation>Des modifications non enregistrées seraient perdues</translation>
    </message>
    <message>
        <source>Your unsaved edits could not be written to the local journal, so closing now loses them. Stay, and Save or Complete to store them in the database, or fix the disk problem shown in the window.</source>
        <translation>Vos modifications non enregistrées n&apos;ont pas pu être écrites dans le journal local : fermer maintenant les perd. Restez, puis Enregistrez ou Terminez pour les stocker dans la base, ou corrigez le problème de disque indiqué dans la fenêtre.</translation>
    </message>
    <message>
        <source>Stay</source>
        <translation>Rester</translation>
    </message>
    <message>
        <source>Close and lose the edits</source>
        <translation>Fermer et perdre les modifications</translation>
    </message>
</context>
<context>
    <name>Language</name>
    <message>
        <source>&amp;System default</source>
        <translation>&amp;Langue du système</translation>
    </message>
</context>
<context>
    <name>Launcher</name>
    <message>
        <source>workbench: configuration problem</source>
        <translation>workbench : problème de configuration</translation>
    </message>
    <message>
        <source>Connecting to {0}…</source>
        <translation>Connexion à {0}…</translation>
    </message>
    <message>
        <source>The database refused the login of {0}: wrong password or no such user. The password comes from the environment variable named in the config file.</source>
        <translation>La base de données a refusé la connexion de {0} : mot de passe erroné ou utilisateur inconnu. Le mot de passe vient de la variable d’environnement indiquée dans le fichier de configuration.</translation>
    </message>
    <message>
        <source>The server refused this password for {0}: check it (Caps Lock?) and try again.</source>
        <translation>Le serveur a refusé ce mot de passe pour {0} : vérifiez-le (Verr. Maj ?) et réessayez.</translation>
    </message>
    <message>
        <source>{0} You will be asked again next time.</source>
        <translation>{0} La question vous sera reposée la prochaine fois.</translation>
    </message>
    <message>
        <source>&amp;Connection</source>
        <translation>&amp;Connexion</translation>
    </message>
    <message>
        <source>No saved connections</source>
        <translation>Aucune connexion enregistrée</translation>
    </message>
    <message>
        <source>&amp;New connection…</source>
        <translation>&amp;Nouvelle connexion…</translation>
    </message>
    <message>
        <source>&amp;Edit this connection…</source>
        <translation>&amp;Modifier cette connexion…</translation>
    </message>
    <message>
        <source>&amp;Forget the stored password</source>
        <translation>&amp;Oublier le mot de passe enregistré</translation>
    </message>
    <message>
        <source>&amp;Supervisor console…</source>
        <translation>Console &amp;superviseur…</translation>
    </message>
    <message>
        <source>&amp;Reload queue settings</source>
        <translation>&amp;Recharger les réglages des files</translation>
    </message>
    <message>
        <source>There is no connection profile {0} any more.</source>
        <translation>Le profil de connexion {0} n’existe plus.</translation>
    </message>
    <message>
        <source>The stored password was removed; you will be asked next time.</source>
        <translation>Le mot de passe enregistré a été supprimé ; il vous sera demandé la prochaine fois.</translation>
    </message>
    <message>
        <source>No password was stored for this connection.</source>
        <translation>Aucun mot de passe n&apos;était enregistré pour cette connexion.</translation>
    </message>
    <message>
        <source>A supervisor published new queue settings (version {0}). They apply when the window reloads: Connection ▸ Reload queue settings (your item and edits are kept).</source>
        <translation>Un superviseur a publié de nouveaux réglages des files (version {0}). Ils s&apos;appliquent au rechargement de la fenêtre : Connexion ▸ Recharger les réglages des files (votre élément et vos modifications sont conservés).</translation>
    </message>
    <message>
        <source>You hold {0} {1}. It stays locked to you and your unsaved edits are kept: it is in your unfinished items when you come back. Continue?</source>
        <translation>Vous détenez {0} {1}. Il reste verrouillé à votre nom et vos modifications non enregistrées sont conservées : vous le retrouverez dans vos éléments inachevés à votre retour. Continuer ?</translation>
    </message>
    <message>
        <source>workbench: cannot connect</source>
        <translation>workbench : connexion impossible</translation>
    </message>
    <message>
        <source>Cannot open {0}.</source>
        <translation>Impossible d&apos;ouvrir {0}.</translation>
    </message>
    <message>
        <source>Try again</source>
        <translation>Réessayer</translation>
    </message>
    <message>
        <source>Edit connection…</source>
        <translation>Modifier la connexion…</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>Annuler</translation>
    </message>
</context>
<context>
    <name>LookupEdit</name>
    <message>
        <source>Type to search {0}</source>
        <translation>Tapez pour chercher dans {0}</translation>
    </message>
    <message>
        <source>Type to search; Down to the rows, Enter picks</source>
        <translation>Tapez pour chercher ; Flèche bas vers la liste, Entrée choisit</translation>
    </message>
</context>
<context>
    <name>MainWindow</name>
    <message>
        <source>Next item</source>
        <translation>Élément suivant</translation>
    </message>
    <message>
        <source>Claim the next waiting item ({0})</source>
        <translation>Prendre le prochain élément en attente ({0})</translation>
    </message>
    <message>
        <source>Pick…</source>
        <translation>Choisir…</translation>
    </message>
    <message>
        <source>Narrow Next item</source>
        <translation>Restreindre Élément suivant</translation>
    </message>
    <message>
        <source>Next item serves only items with this value</source>
        <translation>Élément suivant ne sert que les éléments ayant cette valeur</translation>
    </message>
    <message>
        <source>My unfinished items</source>
        <translation>Mes éléments inachevés</translation>
    </message>
    <message>
        <source>Dismiss</source>
        <translation>Masquer</translation>
    </message>
    <message>
        <source>Connecting…</source>
        <translation>Connexion…</translation>
    </message>
    <message>
        <source>Opening the queues…</source>
        <translation>Ouverture des files…</translation>
    </message>
    <message>
        <source>Extend</source>
        <translation>Prolonger</translation>
    </message>
    <message>
        <source>Claim again and reapply my edits</source>
        <translation>Reprendre avec mes modifications</translation>
    </message>
    <message>
        <source>View my draft…</source>
        <translation>Voir mon brouillon…</translation>
    </message>
    <message>
        <source>Discard my edits</source>
        <translation>Supprimer mes modifications</translation>
    </message>
    <message>
        <source>Release…</source>
        <translation>Libérer…</translation>
    </message>
    <message>
        <source>Defer…</source>
        <translation>Reporter…</translation>
    </message>
    <message>
        <source>Save</source>
        <translation>Enregistrer</translation>
    </message>
    <message>
        <source>&amp;Item</source>
        <translation>&amp;Élément</translation>
    </message>
    <message>
        <source>&amp;View</source>
        <translation>A&amp;ffichage</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation>&amp;Aide</translation>
    </message>
    <message>
        <source>About workbench</source>
        <translation>À propos de workbench</translation>
    </message>
    <message>
        <source>&amp;Language</source>
        <translation>&amp;Langue</translation>
    </message>
    <message>
        <source>&amp;Appearance</source>
        <translation>&amp;Apparence</translation>
    </message>
    <message>
        <source>Language</source>
        <translation>Langue</translation>
    </message>
    <message>
        <source>The new language is used the next time workbench starts.</source>
        <translation>La nouvelle langue s&apos;applique au prochain démarrage de workbench.</translation>
    </message>
    <message>
        <source>workbench — {0} — {1}</source>
        <translation>workbench — {0} — {1}</translation>
    </message>
    <message>
        <source>Queues: waiting items, yours and overdue ones</source>
        <translation>Files : éléments en attente, les vôtres et ceux en retard</translation>
    </message>
    <message>
        <source>Queue</source>
        <translation>File</translation>
    </message>
    <message>
        <source>Waiting</source>
        <translation>En attente</translation>
    </message>
    <message>
        <source>Yours</source>
        <translation>À vous</translation>
    </message>
    <message>
        <source>Overdue</source>
        <translation>En retard</translation>
    </message>
    <message>
        <source>more than {0}</source>
        <translation>plus de {0}</translation>
    </message>
    <message>
        <source>Nothing to save: no field was changed.</source>
        <translation>Rien à enregistrer : aucun champ n&apos;a été modifié.</translation>
    </message>
    <message>
        <source>Complete as “{0}”</source>
        <translation>Terminer comme « {0} »</translation>
    </message>
    <message>
        <source>This queue needs a note with this outcome: say what was done, for whoever looks at {0} later.</source>
        <translation>Cette file exige une note pour ce résultat : dites ce qui a été fait, pour qui consultera {0} plus tard.</translation>
    </message>
    <message>
        <source>Undo Complete</source>
        <translation>Annuler la clôture</translation>
    </message>
    <message>
        <source>Save and complete, or release, the item you have open first; then undo.</source>
        <translation>Terminez ou libérez d’abord l’élément ouvert, puis annulez.</translation>
    </message>
    <message>
        <source>workbench {0}
Configuration: {1}</source>
        <translation>workbench {0}
Configuration : {1}</translation>
    </message>
    <message>
        <source>Press Next item ({0}) to start on {1}.</source>
        <translation>Appuyez sur « Élément suivant » ({0}) pour commencer {1}.</translation>
    </message>
    <message>
        <source>Your unsaved edits from before were restored. Save or Complete to keep them.</source>
        <translation>Vos modifications non enregistrées précédentes ont été restaurées. Enregistrez ou terminez pour les conserver.</translation>
    </message>
    <message>
        <source>{0} (resumed)</source>
        <translation>{0} (repris)</translation>
    </message>
    <message numerus="yes">
        <source>The database switched to another server, which does not have %n Complete(s) you made just before: {0}. Still locked to you: open them from My unfinished items and complete them again.</source>
        <translation>
            <numerusform>La base de données est passée sur un autre serveur, qui n’a pas l’élément que vous venez de terminer : {0}. Il vous est toujours réservé : ouvrez-le depuis Mes éléments inachevés et terminez-le à nouveau.</numerusform>
            <numerusform>La base de données est passée sur un autre serveur, qui n’a pas %n éléments que vous venez de terminer : {0}. Ils vous sont toujours réservés : ouvrez-les depuis Mes éléments inachevés et terminez-les à nouveau.</numerusform>
        </translation>
    </message>
    <message>
        <source>Changes: relay</source>
        <translation>Changements : relais</translation>
    </message>
    <message>
        <source>The change relay tells this window at once when its items change.</source>
        <translation>Le relais des changements prévient aussitôt cette fenêtre quand ses éléments changent.</translation>
    </message>
    <message>
        <source>Relay unreachable — looking for changes itself</source>
        <translation>Relais injoignable — la fenêtre cherche elle-même les changements</translation>
    </message>
    <message>
        <source>The change relay does not answer: this window looks for changes itself until it is back.</source>
        <translation>Le relais des changements ne répond pas : cette fenêtre cherche elle-même les changements jusqu’à son retour.</translation>
    </message>
    <message>
        <source>Any item</source>
        <translation>Tout élément</translation>
    </message>
    <message>
        <source>{0}: {1}</source>
        <translation>{0} : {1}</translation>
    </message>
    <message>
        <source>Queue:</source>
        <translation>File :</translation>
    </message>
    <message>
        <source>Only:</source>
        <translation>Seulement :</translation>
    </message>
    <message>
        <source>Open it</source>
        <translation>Ouvrir</translation>
    </message>
    <message>
        <source>Lock timer</source>
        <translation>Minuteur du verrou</translation>
    </message>
    <message>
        <source>&amp;Open the next item after Complete</source>
        <translation>&amp;Ouvrir l&apos;élément suivant après Terminer</translation>
    </message>
    <message>
        <source>Menu bar</source>
        <translation>Barre de menus</translation>
    </message>
    <message>
        <source>&amp;About workbench</source>
        <translation>À &amp;propos de workbench</translation>
    </message>
    <message>
        <source>Deferred</source>
        <translation>Reporté</translation>
    </message>
    <message>
        <source>Complete as “{0}” ({1})</source>
        <translation>Terminer comme « {0} » ({1})</translation>
    </message>
    <message>
        <source>Leave this item?</source>
        <translation>Quitter cet élément ?</translation>
    </message>
    <message>
        <source>You are working on {0}.</source>
        <translation>Vous travaillez sur {0}.</translation>
    </message>
    <message>
        <source>Keep it locked: it stays yours until {0}; your unsaved edits wait in your unfinished items (Ctrl+L).</source>
        <translation>Garder verrouillé : il reste à vous jusqu’à {0} ; vos modifications non enregistrées vous attendent dans vos éléments inachevés (Ctrl+L).</translation>
    </message>
    <message>
        <source>Keep it locked: it stays yours until {0}.</source>
        <translation>Garder verrouillé : il reste à vous jusqu’à {0}.</translation>
    </message>
    <message>
        <source>&amp;Keep it locked</source>
        <translation>&amp;Garder verrouillé</translation>
    </message>
    <message>
        <source>Change relay</source>
        <translation>Relais des changements</translation>
    </message>
    <message>
        <source>Escalate…</source>
        <translation>Confier à un superviseur…</translation>
    </message>
    <message>
        <source>Items you &amp;escalated…</source>
        <translation>Élé&amp;ments que vous avez confiés…</translation>
    </message>
    <message>
        <source>The items you handed to a supervisor, and what became of each</source>
        <translation>Les éléments que vous avez confiés à un superviseur, et ce que chacun est devenu</translation>
    </message>
    <message>
        <source>Escalate</source>
        <translation>Confier à un superviseur</translation>
    </message>
    <message>
        <source>Hand {0} to a supervisor: say why. Your lock is given up; the history keeps the reason.</source>
        <translation>Confier {0} à un superviseur : dites pourquoi. Votre verrou est rendu ; l’historique garde le motif.</translation>
    </message>
    <message>
        <source>&amp;Reason:</source>
        <translation>&amp;Motif :</translation>
    </message>
    <message>
        <source>&amp;Save and keep it locked</source>
        <translation>&amp;Enregistrer et garder verrouillé</translation>
    </message>
    <message>
        <source>&amp;Give it back</source>
        <translation>&amp;Rendre</translation>
    </message>
    <message>
        <source>&amp;Give it back, discarding my edits</source>
        <translation>&amp;Rendre, en abandonnant mes modifications</translation>
    </message>
    <message>
        <source>Your lock on {0} has run out.</source>
        <translation>Votre verrou sur {0} a expiré.</translation>
    </message>
    <message>
        <source>Opened {0}</source>
        <translation>Ouvert : {0}</translation>
    </message>
    <message>
        <source>Sent back by {0} in review: {1}</source>
        <translation>Renvoyé par {0} à la vérification : {1}</translation>
    </message>
    <message>
        <source>Sent back by {0} in review.</source>
        <translation>Renvoyé par {0} à la vérification.</translation>
    </message>
    <message>
        <source>overdue by {0}</source>
        <translation>en retard de {0}</translation>
    </message>
    <message>
        <source>due in {0}</source>
        <translation>échéance dans {0}</translation>
    </message>
    <message>
        <source>{0} handed you {1} (it was {2}&apos;s). It is locked to you now.</source>
        <translation>{0} vous a confié {1} (auparavant à {2}). Il est maintenant verrouillé à votre nom.</translation>
    </message>
    <message>
        <source>{0} handed you {1}. It is locked to you now.</source>
        <translation>{0} vous a confié {1}. Il est maintenant verrouillé à votre nom.</translation>
    </message>
    <message>
        <source>Item handed to you</source>
        <translation>Élément qui vous est confié</translation>
    </message>
    <message>
        <source>Nothing to do right now. {0}.</source>
        <translation>Rien à faire pour l&apos;instant. {0}.</translation>
    </message>
    <message>
        <source>Saved. Your lock runs until {0}.</source>
        <translation>Enregistré. Votre verrou court jusqu&apos;à {0}.</translation>
    </message>
    <message>
        <source>Completed {0} ({1}). Undo: {2}</source>
        <translation>{0} terminé ({1}). Annuler : {2}</translation>
    </message>
    <message>
        <source>Completed {0} ({1}).</source>
        <translation>{0} terminé ({1}).</translation>
    </message>
    <message>
        <source>Completed {0}. Press Next item ({1}) for the next one.</source>
        <translation>{0} terminé. Appuyez sur « Élément suivant » ({1}) pour le suivant.</translation>
    </message>
    <message>
        <source>Released. Press Next item ({0}) for the next one.</source>
        <translation>Libéré. Appuyez sur « Élément suivant » ({0}) pour le suivant.</translation>
    </message>
    <message>
        <source>{0} by {1} at {2}</source>
        <translation>{0} par {1} le {2}</translation>
    </message>
    <message>
        <source>{0} at {1}</source>
        <translation>{0} le {1}</translation>
    </message>
    <message>
        <source>Handed to a supervisor. Press Next item ({0}) for the next one.</source>
        <translation>Confié à un superviseur. Appuyez sur « Élément suivant » ({0}) pour le suivant.</translation>
    </message>
    <message>
        <source>Deferred until {0}: it comes back to you first then. Press Next item ({1}) for the next one.</source>
        <translation>Reporté jusqu’à {0} : il vous reviendra alors en premier. Appuyez sur Élément suivant ({1}) pour le suivant.</translation>
    </message>
    <message>
        <source>Lock extended until {0}.</source>
        <translation>Verrou prolongé jusqu&apos;à {0}.</translation>
    </message>
    <message>
        <source>expired</source>
        <translation>expiré</translation>
    </message>
    <message>
        <source>{0} left</source>
        <translation>encore {0}</translation>
    </message>
    <message>
        <source>Lock on {0}: {1}</source>
        <translation>Verrou sur {0} : {1}</translation>
    </message>
    <message>
        <source>Your lock on {0} runs out in {1}. Extend it to keep working, or your edits stay here as a draft.</source>
        <translation>Votre verrou sur {0} expire dans {1}. Prolongez-le pour continuer, sinon vos modifications restent ici sous forme de brouillon.</translation>
    </message>
    <message>
        <source>Lock about to expire</source>
        <translation>Verrou sur le point d&apos;expirer</translation>
    </message>
    <message>
        <source>Your edits are kept as a draft.</source>
        <translation>Vos modifications sont conservées comme brouillon.</translation>
    </message>
    <message>
        <source>You had no unsaved edits.</source>
        <translation>Vous n&apos;aviez aucune modification non enregistrée.</translation>
    </message>
    <message>
        <source>Claim again</source>
        <translation>Reprendre</translation>
    </message>
    <message>
        <source>Lock lost</source>
        <translation>Verrou perdu</translation>
    </message>
    <message>
        <source>Your edits are kept as a draft: “View my draft…” shows them beside the current values, to copy or discard.</source>
        <translation>Vos modifications sont conservées comme brouillon : « Voir mon brouillon… » les affiche à côté des valeurs actuelles, pour les copier ou les supprimer.</translation>
    </message>
    <message>
        <source>{0} is yours again: you hold it until {1}. Carry on where you left off.</source>
        <translation>{0} vous est rendu : vous le détenez jusqu&apos;à {1}. Reprenez là où vous en étiez.</translation>
    </message>
    <message>
        <source>Carry on with my edits</source>
        <translation>Continuer avec mes modifications</translation>
    </message>
    <message>
        <source>Carry on</source>
        <translation>Continuer</translation>
    </message>
    <message>
        <source>Your draft is kept: it is shown beside the current values.</source>
        <translation>Votre brouillon est conservé : il est affiché à côté des valeurs actuelles.</translation>
    </message>
    <message>
        <source>The lock cannot be extended beyond {0}: this queue allows at most {1} per lock.</source>
        <translation>Le verrou ne peut pas être prolongé au-delà de {0} : cette file autorise au plus {1} par verrou.</translation>
    </message>
    <message>
        <source>Connected as {0} (database login {1}) — {2}</source>
        <translation>Connecté en tant que {0} (connexion à la base {1}) — {2}</translation>
    </message>
    <message>
        <source>Connected as {0} — {1}</source>
        <translation>Connecté en tant que {0} — {1}</translation>
    </message>
    <message>
        <source>Database unreachable — reconnecting (next try in {0:.0f} s); your work here is kept.</source>
        <translation>Base de données injoignable — nouvel essai dans {0:.0f} s ; votre travail ici est conservé.</translation>
    </message>
    <message>
        <source>Waiting for the database… (your work here is kept)</source>
        <translation>En attente de la base de données… (votre travail ici est conservé)</translation>
    </message>
    <message>
        <source>Edits discarded. Press Next item ({0}) for the next one.</source>
        <translation>Modifications supprimées. Appuyez sur « Élément suivant » ({0}) pour le suivant.</translation>
    </message>
</context>
<context>
    <name>MoveDialog</name>
    <message>
        <source>Move waiting items</source>
        <translation>Déplacer des éléments en attente</translation>
    </message>
    <message>
        <source>Change the waiting items of {0} that nobody holds. Items someone holds, and finished ones, stay as they are.</source>
        <translation>Modifier les éléments en attente de {0} que personne ne tient. Les éléments tenus et les éléments terminés restent tels quels.</translation>
    </message>
    <message>
        <source>Move</source>
        <translation>Déplacer</translation>
    </message>
    <message>
        <source>required: kept in each item&apos;s history</source>
        <translation>obligatoire : conservé dans l’historique de chaque élément</translation>
    </message>
    <message>
        <source>Items whose column</source>
        <translation>Éléments dont la colonne</translation>
    </message>
    <message>
        <source>holds the value</source>
        <translation>a la valeur</translation>
    </message>
    <message>
        <source>Column to change</source>
        <translation>Colonne à modifier</translation>
    </message>
    <message>
        <source>New value</source>
        <translation>Nouvelle valeur</translation>
    </message>
    <message>
        <source>&amp;Items whose:</source>
        <translation>É&amp;léments dont :</translation>
    </message>
    <message>
        <source>is</source>
        <translation>vaut</translation>
    </message>
    <message>
        <source>&amp;Set:</source>
        <translation>Me&amp;ttre :</translation>
    </message>
    <message>
        <source>to</source>
        <translation>à</translation>
    </message>
    <message>
        <source>Loading…</source>
        <translation>Chargement…</translation>
    </message>
    <message>
        <source>a value</source>
        <translation>une valeur</translation>
    </message>
    <message>
        <source>no waiting item has a value here</source>
        <translation>aucun élément en attente n’a de valeur ici</translation>
    </message>
    <message>
        <source>empty: no value</source>
        <translation>vide : aucune valeur</translation>
    </message>
    <message>
        <source>required</source>
        <translation>obligatoire</translation>
    </message>
    <message>
        <source>Say which items: a value of the column they are chosen by.</source>
        <translation>Indiquez quels éléments : une valeur de la colonne qui les choisit.</translation>
    </message>
    <message>
        <source>The new value is the one they have: choose another.</source>
        <translation>Ils ont déjà cette valeur : choisissez-en une autre.</translation>
    </message>
    <message>
        <source>Give a reason: it goes into each item&apos;s history.</source>
        <translation>Donnez une raison : elle figure dans l’historique de chaque élément.</translation>
    </message>
</context>
<context>
    <name>NoteDialog</name>
    <message>
        <source>&amp;Note:</source>
        <translation>&amp;Note :</translation>
    </message>
</context>
<context>
    <name>OperatorSession</name>
    <message>
        <source>unexpected error: {0}</source>
        <translation>erreur inattendue : {0}</translation>
    </message>
    <message>
        <source>no item is open</source>
        <translation>aucun élément n&apos;est ouvert</translation>
    </message>
</context>
<context>
    <name>PasswordDialog</name>
    <message>
        <source>workbench: password</source>
        <translation>workbench : mot de passe</translation>
    </message>
    <message>
        <source>Password for &lt;b&gt;{0}&lt;/b&gt; on {1} (profile {2}):</source>
        <translation>Mot de passe de &lt;b&gt;{0}&lt;/b&gt; sur {1} (profil {2}) :</translation>
    </message>
    <message>
        <source>Password for {0} on {1}</source>
        <translation>Mot de passe de {0} sur {1}</translation>
    </message>
    <message>
        <source>&amp;Remember in the OS password store</source>
        <translation>&amp;Retenir dans le trousseau du système</translation>
    </message>
    <message>
        <source>Connect</source>
        <translation>Se connecter</translation>
    </message>
</context>
<context>
    <name>PickDialog</name>
    <message>
        <source>Pick an item</source>
        <translation>Choisir un élément</translation>
    </message>
    <message>
        <source>Search these items</source>
        <translation>Rechercher parmi ces éléments</translation>
    </message>
    <message>
        <source>the search</source>
        <translation>la recherche</translation>
    </message>
    <message numerus="yes">
        <source>The first %n waiting items of more than {0}, in queue order:</source>
        <translation>
            <numerusform>Le premier des plus de {0} éléments en attente, dans l&apos;ordre de la file :</numerusform>
            <numerusform>Les %n premiers des plus de {0} éléments en attente, dans l&apos;ordre de la file :</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>The first %n of {0} waiting items, in queue order:</source>
        <translation>
            <numerusform>Le premier des {0} éléments en attente, dans l&apos;ordre de la file :</numerusform>
            <numerusform>Les %n premiers des {0} éléments en attente, dans l&apos;ordre de la file :</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n waiting item(s), in queue order:</source>
        <translation>
            <numerusform>%n élément en attente, dans l&apos;ordre de la file :</numerusform>
            <numerusform>%n éléments en attente, dans l&apos;ordre de la file :</numerusform>
        </translation>
    </message>
    <message>
        <source>No item is waiting.</source>
        <translation>Aucun élément en attente.</translation>
    </message>
    <message>
        <source>Claim</source>
        <translation>Prendre</translation>
    </message>
</context>
<context>
    <name>ProbeText</name>
    <message>
        <source>Opened the database file {0}.</source>
        <translation>Fichier de base de données {0} ouvert.</translation>
    </message>
    <message>
        <source>Connected to {0} on {1} with your Windows account.</source>
        <translation>Connecté à {0} sur {1} avec votre compte Windows.</translation>
    </message>
    <message>
        <source>Connected to {0} on {1} as {2}.</source>
        <translation>Connecté à {0} sur {1} en tant que {2}.</translation>
    </message>
    <message>
        <source>The server has no database called “{0}”. Check the database name.</source>
        <translation>Le serveur n&apos;a pas de base de données nommée « {0} ». Vérifiez le nom de la base.</translation>
    </message>
    <message>
        <source>The server knows your Windows account but does not let it use the database “{0}”. Ask the database administrator for access.</source>
        <translation>Le serveur connaît votre compte Windows mais ne lui permet pas d&apos;utiliser la base « {0} ». Demandez l&apos;accès à l&apos;administrateur de la base.</translation>
    </message>
    <message>
        <source>The server knows the user {0} but does not let them use the database “{1}”. Ask the database administrator for access.</source>
        <translation>Le serveur connaît l&apos;utilisateur {0} mais ne lui permet pas d&apos;utiliser la base « {1} ». Demandez l&apos;accès à l&apos;administrateur de la base.</translation>
    </message>
    <message>
        <source>The connection failed for a reason workbench cannot put in plain words; Details shows what the database said.</source>
        <translation>La connexion a échoué pour une raison que workbench ne sait pas dire simplement ; Détails montre ce qu&apos;a répondu la base de données.</translation>
    </message>
    <message>
        <source>The server needs a password for {0}: enter it above.</source>
        <translation>Le serveur demande un mot de passe pour {0} : saisissez-le ci-dessus.</translation>
    </message>
    <message>
        <source>The server does not let your Windows account connect from this computer. Ask the database administrator to allow it.</source>
        <translation>Le serveur n&apos;accepte pas votre compte Windows depuis cet ordinateur. Demandez à l&apos;administrateur de la base de l&apos;autoriser.</translation>
    </message>
    <message>
        <source>The server does not let {0} connect from this computer. Ask the database administrator to allow it.</source>
        <translation>Le serveur n&apos;accepte pas {0} depuis cet ordinateur. Demandez à l&apos;administrateur de la base de l&apos;autoriser.</translation>
    </message>
    <message>
        <source>The server refused your Windows account. Ask the database administrator for a login.</source>
        <translation>Le serveur a refusé votre compte Windows. Demandez un accès à l&apos;administrateur de la base.</translation>
    </message>
    <message>
        <source>The server refused the login: wrong password, or no user called {0}. Check both (Caps Lock?).</source>
        <translation>Le serveur a refusé la connexion : mot de passe erroné, ou aucun utilisateur nommé {0}. Vérifiez les deux (Verr. Maj ?).</translation>
    </message>
    <message>
        <source>The server {0} refused the connection. Check the server name and port, and that the database server is running.</source>
        <translation>Le serveur {0} a refusé la connexion. Vérifiez le nom du serveur et le port, et que le serveur de base de données est démarré.</translation>
    </message>
    <message>
        <source>There is no server called “{0}”. Check the spelling of the server name.</source>
        <translation>Aucun serveur ne s&apos;appelle « {0} ». Vérifiez l&apos;orthographe du nom du serveur.</translation>
    </message>
    <message>
        <source>The server {0} did not answer within {1} s. Check the server name and port, and your network (VPN?).</source>
        <translation>Le serveur {0} n&apos;a pas répondu en {1} s. Vérifiez le nom du serveur et le port, ainsi que votre réseau (VPN ?).</translation>
    </message>
    <message>
        <source>The server {0} cannot be reached. Check the server name and port, your network, and that the database server is running.</source>
        <translation>Le serveur {0} est injoignable. Vérifiez le nom du serveur et le port, votre réseau, et que le serveur de base de données est démarré.</translation>
    </message>
    <message>
        <source>There is no database file at {0}. Check the path.</source>
        <translation>Il n&apos;y a pas de fichier de base de données à {0}. Vérifiez le chemin.</translation>
    </message>
    <message>
        <source>{0} is a folder, not a database file. Choose the file itself.</source>
        <translation>{0} est un dossier, pas un fichier de base de données. Choisissez le fichier lui-même.</translation>
    </message>
    <message>
        <source>{0} is not a SQLite database, or it is damaged. Check the path, or restore a backup.</source>
        <translation>{0} n&apos;est pas une base SQLite, ou elle est endommagée. Vérifiez le chemin, ou restaurez une sauvegarde.</translation>
    </message>
    <message>
        <source>You may not write to {0} or its folder, and workbench needs to. Ask for write access, or use a copy you may change.</source>
        <translation>Vous ne pouvez pas écrire dans {0} ni dans son dossier, et workbench en a besoin. Demandez le droit d&apos;écriture, ou utilisez une copie modifiable.</translation>
    </message>
    <message>
        <source>The database file {0} cannot be opened. Check that you may read and write it.</source>
        <translation>Impossible d&apos;ouvrir le fichier de base de données {0}. Vérifiez que vous pouvez le lire et l&apos;écrire.</translation>
    </message>
    <message>
        <source>The ODBC driver “{0}” is not installed on this computer. Choose an installed one, or ask your IT department to install it.</source>
        <translation>Le pilote ODBC « {0} » n&apos;est pas installé sur cet ordinateur. Choisissez un pilote installé, ou demandez à votre service informatique de l&apos;installer.</translation>
    </message>
    <message>
        <source>No ODBC driver is chosen. Choose one of the installed drivers.</source>
        <translation>Aucun pilote ODBC n&apos;est choisi. Choisissez l&apos;un des pilotes installés.</translation>
    </message>
    <message>
        <source>This copy of workbench lacks the part that talks to {0}. Ask your IT department to install it; Details says which.</source>
        <translation>Il manque à cette installation de workbench le composant qui dialogue avec {0}. Demandez à votre service informatique de l&apos;installer ; Détails indique lequel.</translation>
    </message>
    <message>
        <source>workbench cannot talk to this database with the chosen driver. Choose another driver.</source>
        <translation>workbench ne peut pas dialoguer avec cette base de données avec le pilote choisi. Choisissez un autre pilote.</translation>
    </message>
</context>
<context>
    <name>Problem</name>
    <message>
        <source>contains a NUL character (code 0), which text in a database cannot hold; remove it</source>
        <translation>contient un caractère NUL (code 0), qu’un texte de base de données ne peut pas contenir ; supprimez-le</translation>
    </message>
    <message>
        <source>a value is required (the column does not allow empty values)</source>
        <translation>une valeur est obligatoire (la colonne n’accepte pas de valeur vide)</translation>
    </message>
    <message>
        <source>{0} is not one of {1}</source>
        <translation>{0} n’est pas l’une des valeurs {1}</translation>
    </message>
    <message>
        <source>binary columns cannot be edited</source>
        <translation>les colonnes binaires ne peuvent pas être modifiées</translation>
    </message>
    <message>
        <source>{0} is not true/false (use true, false, yes, no, 1 or 0)</source>
        <translation>{0} n’est pas vrai/faux (utilisez true, false, yes, no, 1 ou 0)</translation>
    </message>
    <message>
        <source>{0} is not a whole number</source>
        <translation>{0} n’est pas un nombre entier</translation>
    </message>
    <message>
        <source>{0} is out of range for this column</source>
        <translation>{0} est hors des limites de cette colonne</translation>
    </message>
    <message>
        <source>{0} is not a number</source>
        <translation>{0} n’est pas un nombre</translation>
    </message>
    <message>
        <source>{0} is not a finite number</source>
        <translation>{0} n’est pas un nombre fini</translation>
    </message>
    <message>
        <source>{0} is too large for this column</source>
        <translation>{0} est trop grand pour cette colonne</translation>
    </message>
    <message>
        <source>{0} is too large (at most {1} digits before the point)</source>
        <translation>{0} est trop grand (au plus {1} chiffres avant la virgule)</translation>
    </message>
    <message>
        <source>{0} has more than {1} decimal places</source>
        <translation>{0} a plus de {1} décimales</translation>
    </message>
    <message>
        <source>{0} is not a date and time (use 2026-11-21 14:30)</source>
        <translation>{0} n’est pas une date et une heure (exemple : 2026-11-21 14:30)</translation>
    </message>
    <message>
        <source>{0} is not a date (use 2026-11-21)</source>
        <translation>{0} n’est pas une date (exemple : 2026-11-21)</translation>
    </message>
    <message>
        <source>{0} is not a time (use 14:30)</source>
        <translation>{0} n’est pas une heure (exemple : 14:30)</translation>
    </message>
    <message>
        <source>expected text</source>
        <translation>texte attendu</translation>
    </message>
    <message>
        <source>at most {0} characters ({1} given)</source>
        <translation>au plus {0} caractères ({1} saisis)</translation>
    </message>
    <message>
        <source>cannot be edited</source>
        <translation>ne peut pas être modifié</translation>
    </message>
    <message>
        <source>required</source>
        <translation>obligatoire</translation>
    </message>
    <message>
        <source>must be at least {0}</source>
        <translation>doit être au moins {0}</translation>
    </message>
    <message>
        <source>must be at most {0}</source>
        <translation>doit être au plus {0}</translation>
    </message>
    <message>
        <source>must match {0}</source>
        <translation>doit correspondre au modèle {0}</translation>
    </message>
    <message>
        <source>must be one of {0}</source>
        <translation>doit être l’une de ces valeurs : {0}</translation>
    </message>
    <message>
        <source>{0} is not in {1}; pick one of its rows</source>
        <translation>{0} n’est pas dans {1} ; choisissez-en une ligne</translation>
    </message>
    <message>
        <source>a note needs some text (--note TEXT, or --text TEXT for `note`)</source>
        <translation>une note a besoin d&apos;un texte (--note TEXTE, ou --text TEXTE pour `note`)</translation>
    </message>
    <message>
        <source>a note holds at most {0} characters ({1} given); shorten it or split it in two</source>
        <translation>une note contient au plus {0} caractères ({1} saisis) ; raccourcissez-la ou coupez-la en deux</translation>
    </message>
    <message>
        <source>{0} needs a reason: say why (--reason TEXT); it is kept in the item&apos;s history</source>
        <translation>{0} demande un motif : dites pourquoi (--reason TEXT) ; il est conservé dans l&apos;historique de l&apos;élément</translation>
    </message>
    <message>
        <source>defer until a time still to come (it is {0} UTC on the database&apos;s clock)</source>
        <translation>reportez à un moment encore à venir (il est {0} UTC à l&apos;horloge de la base de données)</translation>
    </message>
    <message>
        <source>defer at most {0} days ahead; for longer, change the item&apos;s status</source>
        <translation>reportez au plus de {0} jours ; pour plus longtemps, changez le statut de l&apos;élément</translation>
    </message>
    <message>
        <source>say what to change: --set COL=VALUE</source>
        <translation>dites ce qu&apos;il faut changer : --set COL=VALEUR</translation>
    </message>
    <message>
        <source>{0}&apos;s lock cannot be used from the database login {1}: under `workbench grants` each person logs in with their own database login, named exactly like their workbench user</source>
        <translation>le verrou de {0} ne peut pas être utilisé depuis la connexion à la base {1} : sous `workbench grants`, chaque personne se connecte avec sa propre connexion à la base, nommée exactement comme son utilisateur workbench</translation>
    </message>
    <message>
        <source>{0} has no item with key {1}</source>
        <translation>{0} n&apos;a aucun élément de clé {1}</translation>
    </message>
    <message>
        <source>queue {0} has no outcome &apos;{1}&apos; (outcomes: {2})</source>
        <translation>la file {0} n&apos;a pas de résultat « {1} » (résultats : {2})</translation>
    </message>
    <message>
        <source>queue {0} needs a note with {1}: say what happened for whoever works the item next (--note TEXT)</source>
        <translation>la file {0} demande une note avec {1} : dites ce qui s&apos;est passé pour qui traitera l&apos;élément ensuite (--note TEXTE)</translation>
    </message>
    <message>
        <source>nothing to do in {0}: no item is waiting</source>
        <translation>rien à faire dans {0} : aucun élément n’attend</translation>
    </message>
    <message>
        <source>nothing to claim in {0} right now: the items waiting are held by open transactions (a session that locked them has not finished); try again in a moment</source>
        <translation>rien à prendre dans {0} pour le moment : les éléments en attente sont retenus par des transactions ouvertes (une session qui les a verrouillés n’a pas terminé) ; réessayez dans un instant</translation>
    </message>
    <message>
        <source>nothing to do in {0} with {1}</source>
        <translation>rien à faire dans {0} avec {1}</translation>
    </message>
    <message>
        <source>nothing for you in {0}: the items waiting are your own work from {1}, and someone else reviews them (four eyes)</source>
        <translation>rien pour vous dans {0} : les éléments en attente sont votre propre travail de {1}, et quelqu’un d’autre les contrôle (quatre yeux)</translation>
    </message>
    <message>
        <source>you already hold {1} item(s) in {0}, the most this queue allows ({2}); complete or release one first</source>
        <translation>vous détenez déjà dans {0} autant d’éléments que la file le permet ({1} sur {2}) ; terminez-en ou libérez-en un d’abord</translation>
    </message>
    <message>
        <source>{0} {1} is held by {2} since {3} (until {4})</source>
        <translation>{0} {1} est détenu par {2} depuis {3} (jusqu’à {4})</translation>
    </message>
    <message>
        <source>{0} {1} is held by another program under the name {2} since {3}: workbench does not take it before {4}; a supervisor can release it</source>
        <translation>{0} {1} est détenu par un autre programme sous le nom {2} depuis {3} : workbench ne le prend pas avant {4} ; un superviseur peut le libérer</translation>
    </message>
    <message>
        <source>{0} {1} is held by {2} through queue {3}: it is worked on there until it is given back</source>
        <translation>{0} {1} est détenu par {2} via la file {3} : il y est traité jusqu’à ce qu’il soit rendu</translation>
    </message>
    <message>
        <source>{0} {1} is your own work; someone else reviews it (four eyes)</source>
        <translation>{0} {1} est votre propre travail ; quelqu’un d’autre le contrôle (quatre yeux)</translation>
    </message>
    <message>
        <source>{0} {1} is {2}&apos;s own work: reassign its review to someone else (four eyes)</source>
        <translation>{0} {1} est le propre travail de {2} : réattribuez son contrôle à quelqu’un d’autre (quatre yeux)</translation>
    </message>
    <message>
        <source>{0} {1} is not waiting to be worked on (state: {2})</source>
        <translation>{0} {1} n’attend pas d’être traité (état : {2})</translation>
    </message>
    <message>
        <source>queue {0} serves the group {1} only, and {2} is not in it; a supervisor adds you with `workbench group add {2} {1}`</source>
        <translation>la file {0} ne sert que le groupe {1}, et {2} n’en fait pas partie ; un superviseur vous y ajoute avec `workbench group add {2} {1}`</translation>
    </message>
    <message>
        <source>nothing of yours to undo on {0} {1}: nothing has happened to it</source>
        <translation>rien à annuler de votre part sur {0} {1} : il ne lui est encore rien arrivé</translation>
    </message>
    <message>
        <source>nothing of yours to undo on {0} {1}: the last thing that happened to it was {2} by {3}</source>
        <translation>rien à annuler de votre part sur {0} {1} : la dernière chose qui lui est arrivée est {2} par {3}</translation>
    </message>
    <message>
        <source>too late to undo: {0} {1} was completed {2} ago, and undo works for {3}; a supervisor can reopen it</source>
        <translation>trop tard pour annuler : {0} {1} a été terminé il y a {2}, et l’annulation n’est possible que pendant {3} ; un superviseur peut le rouvrir</translation>
    </message>
    <message>
        <source>{0} {1} changed since you completed it: undo is refused; a supervisor can reopen it</source>
        <translation>{0} {1} a changé depuis que vous l’avez terminé : l’annulation est refusée ; un superviseur peut le rouvrir</translation>
    </message>
    <message>
        <source>{0} {1} is held by {2}, not finished: force-release it instead</source>
        <translation>{0} {1} est tenu par {2} et n’est pas terminé : libérez-le plutôt de force</translation>
    </message>
    <message>
        <source>{0} {1} is waiting already: nothing to reopen</source>
        <translation>{0} {1} attend déjà : rien à rouvrir</translation>
    </message>
    <message>
        <source>queue {0} does not say how to reopen an item: set [queues.{1}.on_reopen] to the values that make it wait again, e.g. status = &quot;open&quot;</source>
        <translation>la file {0} ne dit pas comment rouvrir un élément : donnez à [queues.{1}.on_reopen] les valeurs qui le remettent en attente, par ex. status = &quot;open&quot;</translation>
    </message>
    <message>
        <source>queue {0} does not say how to hand an item to a supervisor: set [queues.{1}.on_escalate] to the values that take it out of the work to do, e.g. status = &quot;escalated&quot;</source>
        <translation>la file {0} ne dit pas comment confier un élément à un superviseur : donnez à [queues.{1}.on_escalate] les valeurs qui le sortent du travail à faire, par ex. status = &quot;escalated&quot;</translation>
    </message>
    <message>
        <source>{0} {1} changed while it was being reopened; try again</source>
        <translation>{0} {1} a changé pendant sa réouverture ; réessayez</translation>
    </message>
    <message>
        <source>{0} {1} is not waiting for a supervisor (taken, reopened or never escalated): nothing to take</source>
        <translation>{0} {1} n’attend pas de superviseur (pris en charge, rouvert ou jamais escaladé) : rien à prendre</translation>
    </message>
    <message>
        <source>take is not available on queue {0}: {1}; reopen the item, then claim it</source>
        <translation>la prise en charge n’est pas disponible dans la file {0} : {1} ; rouvrez l’élément, puis prenez-le</translation>
    </message>
    <message>
        <source>queue {0} hands its escalated items to the group {1} and to supervisors, and {2} is neither; a supervisor adds {2} with `workbench group add {2} {1}`</source>
        <translation>la file {0} confie ses éléments escaladés au groupe {1} et aux superviseurs, et {2} n’est ni membre du groupe ni superviseur ; un superviseur ajoute {2} avec `workbench group add {2} {1}`</translation>
    </message>
    <message>
        <source>{0} {1} is not locked by anyone</source>
        <translation>{0} {1} n&apos;est verrouillé par personne</translation>
    </message>
    <message>
        <source>{0} {1}: this item was taken in {2}; {3} it there</source>
        <translation>{0} {1} : cet élément a été pris dans {2} ; {3} là-bas</translation>
    </message>
    <message>
        <source>{0} {1} changed while it was being reassigned; try again</source>
        <translation>{0} {1} a changé pendant sa réattribution ; réessayez</translation>
    </message>
    <message>
        <source>{0} {1} changed while it was being released; try again</source>
        <translation>{0} {1} a changé pendant sa libération ; réessayez</translation>
    </message>
    <message>
        <source>{0} {1} is not waiting, or someone holds it: a move leaves it as it is</source>
        <translation>{0} {1} n&apos;attend pas, ou quelqu&apos;un le tient : un déplacement le laisse tel quel</translation>
    </message>
    <message>
        <source>a move writes neither the key nor the lock (nor a column the database computes)</source>
        <translation>un déplacement n&apos;écrit ni la clé ni le verrou (ni une colonne calculée par la base de données)</translation>
    </message>
    <message>
        <source>{1} would take waiting items of {0} out of its work to do: a move keeps items waiting (another category, tier, team or priority); items are finished by working them</source>
        <translation>{1} sortirait des éléments en attente de {0} du travail à faire : un déplacement garde les éléments en attente (autre catégorie, niveau, équipe ou priorité) ; on termine un élément en le traitant</translation>
    </message>
    <message>
        <source>force-release {0} {1}</source>
        <translation>forcer la libération de {0} {1}</translation>
    </message>
    <message>
        <source>reassign {0} {1}</source>
        <translation>réattribuer {0} {1}</translation>
    </message>
    <message>
        <source>reopen {0} {1}</source>
        <translation>rouvrir {0} {1}</translation>
    </message>
    <message>
        <source>take {0} {1}</source>
        <translation>prendre en charge {0} {1}</translation>
    </message>
    <message>
        <source>move items of {0}</source>
        <translation>déplacer des éléments de {0}</translation>
    </message>
    <message>
        <source>publish queue settings</source>
        <translation>publier les réglages des files</translation>
    </message>
    <message>
        <source>change groups (here: add {0} to {1})</source>
        <translation>modifier les groupes (ici : ajouter {0} à {1})</translation>
    </message>
    <message>
        <source>change groups (here: remove {0} from {1})</source>
        <translation>modifier les groupes (ici : retirer {0} de {1})</translation>
    </message>
    <message>
        <source>grant roles (here: {0} to {1})</source>
        <translation>attribuer des rôles (ici : {0} à {1})</translation>
    </message>
    <message>
        <source>revoke roles (here: {0}&apos;s)</source>
        <translation>retirer des rôles (ici : celui de {0})</translation>
    </message>
    <message>
        <source>{0} may not {1}: only supervisors may, and {0} is not one in this database&apos;s roles table (supervisors: {2}); a supervisor grants it with `workbench --user NAME role grant {0} supervisor`</source>
        <translation>{0} ne peut pas {1} : seuls les superviseurs le peuvent, et {0} n&apos;en est pas un dans la table des rôles de cette base (superviseurs : {2}) ; un superviseur accorde ce droit avec `workbench --user NAME role grant {0} supervisor`</translation>
    </message>
    <message>
        <source>{0} may not {1}: the database allows that only to members of the role {2}, and the login {3} is not one; a database administrator grants it with GRANT {2} TO {3}</source>
        <translation>{0} ne peut pas {1} : la base ne le permet qu&apos;aux membres du rôle {2}, et la connexion {3} n&apos;en est pas membre ; un administrateur de la base l&apos;accorde avec GRANT {2} TO {3}</translation>
    </message>
    <message>
        <source>{0} may not {1}: the database&apos;s row-level security does not let this login change it</source>
        <translation>{0} ne peut pas {1} : la sécurité au niveau des lignes de la base ne permet pas à cette connexion de modifier la ligne</translation>
    </message>
    <message>
        <source>give the profile a name of 1 to 64 characters (no line breaks, no spaces at the ends)</source>
        <translation>donnez au profil un nom de 1 à 64 caractères (sans saut de ligne, sans espace au début ni à la fin)</translation>
    </message>
    <message>
        <source>choose the SQLite database file</source>
        <translation>choisissez le fichier de base de données SQLite</translation>
    </message>
    <message>
        <source>enter the server&apos;s host name or address</source>
        <translation>saisissez le nom d’hôte ou l’adresse du serveur</translation>
    </message>
    <message>
        <source>{0} is not a host name; write only the name or address, and the port in its own field</source>
        <translation>{0} n’est pas un nom d’hôte ; écrivez seulement le nom ou l’adresse, et le port dans son propre champ</translation>
    </message>
    <message>
        <source>must be between 1 and 65535</source>
        <translation>doit être compris entre 1 et 65535</translation>
    </message>
    <message>
        <source>enter the database name</source>
        <translation>saisissez le nom de la base de données</translation>
    </message>
    <message>
        <source>enter the user name to log in with</source>
        <translation>saisissez le nom d’utilisateur pour la connexion</translation>
    </message>
    <message>
        <source>choose the installed ODBC driver, e.g. &apos;ODBC Driver 18 for SQL Server&apos;</source>
        <translation>choisissez le pilote ODBC installé, p. ex. « ODBC Driver 18 for SQL Server »</translation>
    </message>
    <message>
        <source>choose the queue config file, or use the settings published in the database</source>
        <translation>choisissez le fichier de configuration de la file, ou utilisez les réglages publiés dans la base de données</translation>
    </message>
</context>
<context>
    <name>QuitGuard</name>
    <message>
        <source>The database did not answer within {0:.0f} s.</source>
        <translation>La base de données n&apos;a pas répondu en {0:.0f} s.</translation>
    </message>
    <message>
        <source>You are working on {0}.</source>
        <translation>Vous travaillez sur {0}.</translation>
    </message>
    <message>
        <source>Keep it locked: it stays yours until {0}; {1}</source>
        <translation>Le garder verrouillé : il reste à vous jusqu&apos;à {0} ; {1}</translation>
    </message>
    <message>
        <source>your unsaved edits wait in your unfinished items.</source>
        <translation>vos modifications non enregistrées vous attendent dans vos éléments inachevés.</translation>
    </message>
    <message>
        <source>then the lock runs out on its own.</source>
        <translation>ensuite le verrou expire de lui-même.</translation>
    </message>
    <message>
        <source>Release it: it goes back to the queue now{0}.</source>
        <translation>Le libérer : il retourne dans la file maintenant{0}.</translation>
    </message>
    <message>
        <source>, and your unsaved edits are discarded</source>
        <translation>, et vos modifications non enregistrées sont supprimées</translation>
    </message>
    <message>
        <source>Close workbench?</source>
        <translation>Fermer workbench ?</translation>
    </message>
    <message>
        <source>&amp;Keep it locked and close</source>
        <translation>&amp;Garder verrouillé et fermer</translation>
    </message>
    <message>
        <source>&amp;Release it and close</source>
        <translation>&amp;Libérer et fermer</translation>
    </message>
    <message>
        <source>Giving {0} back to the queue before closing…</source>
        <translation>Retour de {0} dans la file avant la fermeture…</translation>
    </message>
    <message>
        <source>It could not be released ({0}).</source>
        <translation>Il n&apos;a pas pu être libéré ({0}).</translation>
    </message>
    <message>
        <source>{0} stays locked to you until {1}; then the lock runs out on its own and the item goes back to the queue.</source>
        <translation>{0} reste verrouillé à votre nom jusqu&apos;à {1} ; ensuite le verrou expire de lui-même et l&apos;élément retourne dans la file.</translation>
    </message>
    <message>
        <source>Closing workbench</source>
        <translation>Fermeture de workbench</translation>
    </message>
</context>
<context>
    <name>ReassignDialog</name>
    <message>
        <source>Move {0} {1} from {2} to another operator? It is locked to them with a fresh lock; {2}&apos;s window says who did it and why, and keeps any unsaved edits as a draft.</source>
        <translation>Transférer {0} {1} de {2} à un autre opérateur ? Il lui est verrouillé avec un nouveau verrou ; la fenêtre de {2} indique qui l&apos;a fait et pourquoi, et conserve les modifications non enregistrées comme brouillon.</translation>
    </message>
    <message>
        <source>Move these items from {0} to another operator? Each is locked to them with a fresh lock; each holder&apos;s window says who did it and why, and keeps any unsaved edits as a draft.</source>
        <translation>Confier ces éléments de {0} à une autre personne ? Chacun lui est verrouillé avec un nouveau verrou ; la fenêtre de chaque détenteur indique qui l’a fait et pourquoi, et garde les modifications non enregistrées comme brouillon.</translation>
    </message>
    <message>
        <source>Reassign</source>
        <translation>Réattribuer</translation>
    </message>
    <message>
        <source>&amp;To:</source>
        <translation>&amp;À :</translation>
    </message>
    <message>
        <source>Name the operator who takes the item over.</source>
        <translation>Indiquez l&apos;opérateur qui reprend l&apos;élément.</translation>
    </message>
    <message>
        <source>{0} already holds it.</source>
        <translation>{0} le détient déjà.</translation>
    </message>
</context>
<context>
    <name>RecordForm</name>
    <message>
        <source>a whole number</source>
        <translation>un nombre entier</translation>
    </message>
    <message>
        <source>a number, e.g. 12.50</source>
        <translation>un nombre, p. ex. 12.50</translation>
    </message>
    <message>
        <source>a number</source>
        <translation>un nombre</translation>
    </message>
    <message>
        <source>Required</source>
        <translation>Champ obligatoire</translation>
    </message>
    <message>
        <source>As imported: {0}</source>
        <translation>Tel qu&apos;importé : {0}</translation>
    </message>
</context>
<context>
    <name>ReleaseDialog</name>
    <message>
        <source>Release item</source>
        <translation>Libérer l&apos;élément</translation>
    </message>
    <message>
        <source>Give {0} back to the queue so someone else can take it.</source>
        <translation>Rendre {0} à la file pour que quelqu&apos;un d&apos;autre puisse le prendre.</translation>
    </message>
    <message>
        <source>Your unsaved edits will be discarded.</source>
        <translation>Vos modifications non enregistrées seront supprimées.</translation>
    </message>
    <message>
        <source>&amp;Reason (pick one or type your own):</source>
        <translation>&amp;Motif (choisissez-en un ou saisissez le vôtre) :</translation>
    </message>
    <message>
        <source>&amp;Note for whoever takes it next (required):</source>
        <translation>&amp;Note pour la personne suivante (obligatoire) :</translation>
    </message>
    <message>
        <source>&amp;Note for whoever takes it next (optional):</source>
        <translation>&amp;Note pour la personne suivante (facultative) :</translation>
    </message>
    <message>
        <source>Release</source>
        <translation>Libérer</translation>
    </message>
</context>
<context>
    <name>ReopenDialog</name>
    <message>
        <source>Reopen</source>
        <translation>Rouvrir</translation>
    </message>
    <message>
        <source>Put {0} {1} back to waiting, with the queue&apos;s reopen values? It is served again in its place in the queue.</source>
        <translation>Remettre {0} {1} en attente, avec les valeurs de réouverture de la file ? Il sera de nouveau servi à sa place dans la file.</translation>
    </message>
    <message>
        <source>required: kept in the item&apos;s history</source>
        <translation>obligatoire : conservé dans l’historique de l’élément</translation>
    </message>
    <message>
        <source>Give a reason: it goes into the item&apos;s history.</source>
        <translation>Indiquez un motif : il va dans l’historique de l’élément.</translation>
    </message>
</context>
<context>
    <name>ResumePanel</name>
    <message>
        <source>Queue</source>
        <translation>File</translation>
    </message>
    <message>
        <source>Item</source>
        <translation>Élément</translation>
    </message>
    <message>
        <source>Summary</source>
        <translation>Résumé</translation>
    </message>
    <message>
        <source>Held for</source>
        <translation>Détenu depuis</translation>
    </message>
    <message>
        <source>Time left</source>
        <translation>Temps restant</translation>
    </message>
    <message>
        <source>Draft</source>
        <translation>Brouillon</translation>
    </message>
    <message>
        <source>Due</source>
        <translation>Échéance</translation>
    </message>
    <message>
        <source>Unfinished items</source>
        <translation>Éléments inachevés</translation>
    </message>
    <message>
        <source>&amp;Open</source>
        <translation>&amp;Ouvrir</translation>
    </message>
    <message>
        <source>View &amp;draft…</source>
        <translation>Voir le &amp;brouillon…</translation>
    </message>
    <message>
        <source>&amp;Refresh</source>
        <translation>Ac&amp;tualiser</translation>
    </message>
    <message>
        <source>Nothing unfinished.</source>
        <translation>Rien d&apos;inachevé.</translation>
    </message>
    <message>
        <source>You have 1 unfinished item: pick one to go straight back to it.</source>
        <translation>Vous avez 1 élément inachevé : choisissez-le pour y revenir directement.</translation>
    </message>
    <message>
        <source>You have {0} unfinished items: pick one to go straight back to it.</source>
        <translation>Vous avez {0} éléments inachevés : choisissez-en un pour y revenir directement.</translation>
    </message>
    <message>
        <source>lock gone</source>
        <translation>verrou perdu</translation>
    </message>
    <message>
        <source>expired</source>
        <translation>expiré</translation>
    </message>
    <message>
        <source>unsaved edits</source>
        <translation>modifications non enregistrées</translation>
    </message>
</context>
<context>
    <name>ShortcutsDialog</name>
    <message>
        <source>Keyboard shortcuts</source>
        <translation>Raccourcis clavier</translation>
    </message>
    <message>
        <source>Click a key and press the new combination; the × clears it. Tab and Shift+Tab move between fields; Enter opens the selected item in lists. In a note box, Ctrl+Return sends the note: beside the form it adds the note, in the Release, Defer and Complete dialogs it confirms the dialog.</source>
        <translation>Cliquez sur une touche et appuyez sur la nouvelle combinaison ; le × l’efface. Tab et Maj+Tab passent d’un champ à l’autre ; Entrée ouvre l’élément choisi dans les listes. Dans une zone de note, Ctrl+Entrée envoie la note : à côté du formulaire, elle ajoute la note ; dans les dialogues Libérer, Reporter et Terminer, elle valide le dialogue.</translation>
    </message>
    <message>
        <source>Keys</source>
        <translation>Touches</translation>
    </message>
    <message>
        <source>Does</source>
        <translation>Action</translation>
    </message>
    <message>
        <source>Keys for: {0}</source>
        <translation>Touches pour : {0}</translation>
    </message>
    <message>
        <source>the keys for {0}</source>
        <translation>les touches de {0}</translation>
    </message>
    <message>
        <source>Single keys: N for Next item, 1 to 9 for the outcomes (only while the cursor is not in a text field)</source>
        <translation>Touches simples : N pour Élément suivant, 1 à 9 pour les résultats (seulement quand le curseur n’est pas dans un champ de texte)</translation>
    </message>
</context>
<context>
    <name>SourcePane</name>
    <message>
        <source>Source</source>
        <translation>Source</translation>
    </message>
    <message>
        <source>Previous page</source>
        <translation>Page précédente</translation>
    </message>
    <message>
        <source>Next page</source>
        <translation>Page suivante</translation>
    </message>
    <message>
        <source>Zoom out</source>
        <translation>Zoom arrière</translation>
    </message>
    <message>
        <source>Zoom in</source>
        <translation>Zoom avant</translation>
    </message>
    <message>
        <source>Fit</source>
        <translation>Ajuster</translation>
    </message>
    <message>
        <source>Fit to the pane&apos;s width</source>
        <translation>Ajuster à la largeur du panneau</translation>
    </message>
    <message>
        <source>Source document</source>
        <translation>Document source</translation>
    </message>
    <message>
        <source>Source image</source>
        <translation>Image source</translation>
    </message>
    <message>
        <source>Source text</source>
        <translation>Texte source</translation>
    </message>
    <message>
        <source>No item is open.</source>
        <translation>Aucun élément n’est ouvert.</translation>
    </message>
    <message>
        <source>Loading the source…</source>
        <translation>Chargement de la source…</translation>
    </message>
    <message>
        <source>This item names no source.</source>
        <translation>Cet élément n’indique aucune source.</translation>
    </message>
    <message>
        <source>The source cannot be shown: {0}</source>
        <translation>La source ne peut pas être affichée : {0}</translation>
    </message>
    <message>
        <source>The source cannot be shown: it is not a PDF this program can read.</source>
        <translation>La source ne peut pas être affichée : ce n’est pas un PDF que ce programme sait lire.</translation>
    </message>
    <message>
        <source>The source cannot be shown: it is not an image this program can read.</source>
        <translation>La source ne peut pas être affichée : ce n’est pas une image que ce programme sait lire.</translation>
    </message>
    <message>
        <source>Page {0} of {1}</source>
        <translation>Page {0} sur {1}</translation>
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
        <translation>Aujourd&apos;hui</translation>
    </message>
    <message>
        <source>today</source>
        <translation>aujourd&apos;hui</translation>
    </message>
    <message>
        <source>Last 7 days</source>
        <translation>7 derniers jours</translation>
    </message>
    <message>
        <source>last 7 days</source>
        <translation>7 derniers jours</translation>
    </message>
    <message>
        <source>Last 30 days</source>
        <translation>30 derniers jours</translation>
    </message>
    <message>
        <source>last 30 days</source>
        <translation>30 derniers jours</translation>
    </message>
    <message>
        <source>workbench supervisor — {0}</source>
        <translation>workbench superviseur — {0}</translation>
    </message>
    <message>
        <source>All queues</source>
        <translation>Toutes les files</translation>
    </message>
    <message>
        <source>Filter by holder</source>
        <translation>Filtrer par détenteur</translation>
    </message>
    <message>
        <source> s</source>
        <translation> s</translation>
    </message>
    <message>
        <source>Refresh</source>
        <translation>Actualiser</translation>
    </message>
    <message>
        <source>Loading…</source>
        <translation>Chargement…</translation>
    </message>
    <message>
        <source>The period of the operators&apos; figures and the charts</source>
        <translation>La période des chiffres des opérateurs et des graphiques</translation>
    </message>
    <message>
        <source>Queue:</source>
        <translation>File :</translation>
    </message>
    <message>
        <source>Period:</source>
        <translation>Période :</translation>
    </message>
    <message>
        <source>Refresh every</source>
        <translation>Actualiser toutes les</translation>
    </message>
    <message>
        <source>Lock board</source>
        <translation>Tableau des verrous</translation>
    </message>
    <message>
        <source>Queue health</source>
        <translation>État des files</translation>
    </message>
    <message>
        <source>Operators</source>
        <translation>Opérateurs</translation>
    </message>
    <message>
        <source>Item history</source>
        <translation>Historique d&apos;un élément</translation>
    </message>
    <message>
        <source>Charts</source>
        <translation>Graphiques</translation>
    </message>
    <message>
        <source>Escalated</source>
        <translation>Confiés à un superviseur</translation>
    </message>
    <message>
        <source>Force release…</source>
        <translation>Libération forcée…</translation>
    </message>
    <message>
        <source>Reassign…</source>
        <translation>Réattribuer…</translation>
    </message>
    <message>
        <source>History</source>
        <translation>Historique</translation>
    </message>
    <message>
        <source>Export CSV…</source>
        <translation>Exporter en CSV…</translation>
    </message>
    <message>
        <source>Yellow: expires soon · Red: expired, back in the pool on the next claim</source>
        <translation>Jaune : expire bientôt · Rouge : expiré, de nouveau libre à la prochaine prise</translation>
    </message>
    <message>
        <source>Queue</source>
        <translation>File</translation>
    </message>
    <message>
        <source>Waiting</source>
        <translation>En attente</translation>
    </message>
    <message>
        <source>Locked</source>
        <translation>Verrouillés</translation>
    </message>
    <message>
        <source>Expired locks</source>
        <translation>Verrous expirés</translation>
    </message>
    <message>
        <source>Completed today</source>
        <translation>Terminés aujourd&apos;hui</translation>
    </message>
    <message>
        <source>Oldest waiting</source>
        <translation>Plus ancienne attente</translation>
    </message>
    <message>
        <source>Releases today</source>
        <translation>Libérations aujourd&apos;hui</translation>
    </message>
    <message>
        <source>Overdue</source>
        <translation>En retard</translation>
    </message>
    <message>
        <source>the holder filter</source>
        <translation>le filtre par détenteur</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>Fermer</translation>
    </message>
    <message>
        <source>Expiries today</source>
        <translation>Expirations aujourd&apos;hui</translation>
    </message>
    <message>
        <source>Force releases today</source>
        <translation>Libérations forcées aujourd&apos;hui</translation>
    </message>
    <message>
        <source>Move waiting items…</source>
        <translation>Déplacer des éléments en attente…</translation>
    </message>
    <message>
        <source>Change a column of the selected queue&apos;s waiting items nobody holds, e.g. another category or tier</source>
        <translation>Modifier une colonne des éléments en attente que personne ne tient dans la file choisie, p. ex. une autre catégorie ou un autre niveau</translation>
    </message>
    <message>
        <source>Why items were released today:</source>
        <translation>Pourquoi des éléments ont été libérés aujourd&apos;hui :</translation>
    </message>
    <message>
        <source>Reason</source>
        <translation>Motif</translation>
    </message>
    <message>
        <source>Times</source>
        <translation>Fois</translation>
    </message>
    <message>
        <source>Operator</source>
        <translation>Opérateur</translation>
    </message>
    <message>
        <source>Completed</source>
        <translation>Terminés</translation>
    </message>
    <message>
        <source>Median handle time</source>
        <translation>Durée de traitement médiane</translation>
    </message>
    <message>
        <source>90th percentile</source>
        <translation>90e centile</translation>
    </message>
    <message>
        <source>Releases</source>
        <translation>Libérations</translation>
    </message>
    <message>
        <source>Expiries</source>
        <translation>Expirations</translation>
    </message>
    <message>
        <source>Force-released</source>
        <translation>Libérés de force</translation>
    </message>
    <message>
        <source>Accepted</source>
        <translation>Acceptés</translation>
    </message>
    <message>
        <source>Sent back</source>
        <translation>Renvoyés</translation>
    </message>
    <message>
        <source>Of this operator&apos;s work reviewed in the period (a dash: the queue is not reviewed)</source>
        <translation>Du travail de cet opérateur contrôlé sur la période (un tiret : la file n&apos;est pas contrôlée)</translation>
    </message>
    <message>
        <source>Item key</source>
        <translation>Clé de l&apos;élément</translation>
    </message>
    <message>
        <source>Show</source>
        <translation>Afficher</translation>
    </message>
    <message>
        <source>Reopen…</source>
        <translation>Rouvrir…</translation>
    </message>
    <message>
        <source>Put a finished item back to waiting (the queue&apos;s on_reopen values)</source>
        <translation>Remettre en attente un élément terminé (les valeurs on_reopen de la file)</translation>
    </message>
    <message>
        <source>When</source>
        <translation>Quand</translation>
    </message>
    <message>
        <source>How often the tab shown is read again. The lock board shows claims and releases as they happen and counts the time left itself: it is read whole every {0}, or with Refresh.</source>
        <translation>Fréquence à laquelle l’onglet affiché est relu. Le tableau des verrous montre les prises et les libérations dès qu’elles ont lieu et décompte lui-même le temps restant : il est relu en entier toutes les {0}, ou avec Actualiser.</translation>
    </message>
    <message>
        <source>Item</source>
        <translation>Élément</translation>
    </message>
    <message>
        <source>Waiting for</source>
        <translation>En attente de</translation>
    </message>
    <message>
        <source>Escalated by</source>
        <translation>Confié par</translation>
    </message>
    <message>
        <source>Escalated items</source>
        <translation>Éléments confiés à un superviseur</translation>
    </message>
    <message>
        <source>Whom the item was handed to: the queue&apos;s escalate_to group (and supervisors), or supervisors</source>
        <translation>À qui l’élément a été confié : le groupe escalate_to de la file (et les superviseurs), ou les superviseurs</translation>
    </message>
    <message>
        <source>Take</source>
        <translation>Prendre en charge</translation>
    </message>
    <message>
        <source>Take the selected item to work it: it is yours, with a fresh lock, as after a claim</source>
        <translation>Prendre en charge l’élément sélectionné pour le traiter : il est à vous, avec un nouveau verrou, comme après une prise</translation>
    </message>
    <message>
        <source>{0} {1} is yours now: work it in the workbench window.</source>
        <translation>{0} {1} est à vous maintenant : traitez-le dans la fenêtre workbench.</translation>
    </message>
    <message>
        <source>Not taken: {0}</source>
        <translation>Non pris en charge : {0}</translation>
    </message>
    <message>
        <source>Supervisors</source>
        <translation>Superviseurs</translation>
    </message>
    <message>
        <source>Event</source>
        <translation>Événement</translation>
    </message>
    <message>
        <source>By</source>
        <translation>Par</translation>
    </message>
    <message>
        <source>Holder</source>
        <translation>Détenteur</translation>
    </message>
    <message>
        <source>Reason / outcome</source>
        <translation>Motif / résultat</translation>
    </message>
    <message>
        <source>Refreshed {0} ({1:.0f} ms)</source>
        <translation>Actualisé à {0} ({1:.0f} ms)</translation>
    </message>
    <message>
        <source>Could not refresh: {0} — trying again in {1} s; the figures shown are from the last refresh</source>
        <translation>Actualisation impossible : {0} — nouvel essai dans {1} s ; les chiffres affichés datent de la dernière actualisation</translation>
    </message>
    <message>
        <source>Showing the oldest {0} of {1} locks: the board lists at most {2} per queue. Force release and reassign work on the locks shown; `workbench board QUEUE --limit N` lists more.</source>
        <translation>Affichage des {0} verrous les plus anciens sur {1} : le tableau en liste au plus {2} par file. Libérer et réattribuer agissent sur les verrous affichés ; `workbench board QUEUE --limit N` en liste davantage.</translation>
    </message>
    <message numerus="yes">
        <source>%n item(s) released.</source>
        <translation>
            <numerusform>%n élément libéré.</numerusform>
            <numerusform>%n éléments libérés.</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n item(s) reassigned to {0}.</source>
        <translation>
            <numerusform>%n élément réattribué à {0}.</numerusform>
            <numerusform>%n éléments réattribués à {0}.</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n not: see the message.</source>
        <translation>
            <numerusform>%n non : voir le message.</numerusform>
            <numerusform>%n non : voir le message.</numerusform>
        </translation>
    </message>
    <message>
        <source>These items had changed meanwhile:</source>
        <translation>Ces éléments avaient changé entre-temps :</translation>
    </message>
    <message>
        <source>Nothing more was done: {0}</source>
        <translation>Rien de plus n&apos;a été fait : {0}</translation>
    </message>
    <message>
        <source>Note</source>
        <translation>Note</translation>
    </message>
    <message numerus="yes">
        <source>%n event(s) for {0} {1}</source>
        <translation>
            <numerusform>%n événement pour {0} {1}</numerusform>
            <numerusform>%n événements pour {0} {1}</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n note(s)</source>
        <translation>
            <numerusform>%n note</numerusform>
            <numerusform>%n notes</numerusform>
        </translation>
    </message>
    <message>
        <source>Move waiting items</source>
        <translation>Déplacer des éléments en attente</translation>
    </message>
    <message>
        <source>Choose a queue first: select its row here, or pick it under Queue:.</source>
        <translation>Choisissez d’abord une file : sa ligne ici, ou sous File :.</translation>
    </message>
    <message numerus="yes">
        <source>%n waiting item(s) of {0} moved.</source>
        <translation>
            <numerusform>%n élément en attente de {0} déplacé.</numerusform>
            <numerusform>%n éléments en attente de {0} déplacés.</numerusform>
        </translation>
    </message>
    <message>
        <source>Nothing moved: {0}</source>
        <translation>Rien n’a été déplacé : {0}</translation>
    </message>
    <message>
        <source>No waiting item nobody holds matches: nothing to move.</source>
        <translation>Aucun élément en attente libre ne correspond : rien à déplacer.</translation>
    </message>
    <message numerus="yes">
        <source>Set {0} on %n waiting item(s) of {1}?</source>
        <translation>
            <numerusform>Mettre {0} sur %n élément en attente de {1} ?</numerusform>
            <numerusform>Mettre {0} sur %n éléments en attente de {1} ?</numerusform>
        </translation>
    </message>
    <message>
        <source>Type the key of the item to reopen.</source>
        <translation>Saisissez la clé de l’élément à rouvrir.</translation>
    </message>
    <message>
        <source>{0} {1} waits again.</source>
        <translation>{0} {1} est de nouveau en attente.</translation>
    </message>
    <message>
        <source>Not reopened: {0}</source>
        <translation>Non rouvert : {0}</translation>
    </message>
    <message>
        <source>Export CSV</source>
        <translation>Exporter en CSV</translation>
    </message>
    <message>
        <source>CSV files (*.csv)</source>
        <translation>Fichiers CSV (*.csv)</translation>
    </message>
    <message numerus="yes">
        <source>Saved %n row(s) to {0}</source>
        <translation>
            <numerusform>%n ligne enregistrée dans {0}</numerusform>
            <numerusform>%n lignes enregistrées dans {0}</numerusform>
        </translation>
    </message>
    <message>
        <source>Changes: relay</source>
        <translation>Changements : relais</translation>
    </message>
    <message>
        <source>Relay unreachable — looking for changes itself</source>
        <translation>Relais injoignable — la fenêtre cherche elle-même les changements</translation>
    </message>
</context>
<context>
    <name>Theme</name>
    <message>
        <source>&amp;As the system</source>
        <translation>&amp;Comme le système</translation>
    </message>
    <message>
        <source>&amp;Light</source>
        <translation>C&amp;lair</translation>
    </message>
    <message>
        <source>&amp;Dark</source>
        <translation>&amp;Sombre</translation>
    </message>
    <message>
        <source>&amp;High contrast</source>
        <translation>Contraste &amp;élevé</translation>
    </message>
</context>
<context>
    <name>Times</name>
    <message>
        <source>overdue by {0}</source>
        <translation>en retard de {0}</translation>
    </message>
    <message>
        <source>in {0}</source>
        <translation>dans {0}</translation>
    </message>
</context>
<context>
    <name>_ReasonDialog</name>
    <message>
        <source>required: the holder is shown it</source>
        <translation>obligatoire : le détenteur le verra</translation>
    </message>
    <message>
        <source>&amp;Reason:</source>
        <translation>&amp;Motif :</translation>
    </message>
    <message>
        <source>Give a reason: the holder sees it, and it goes into the history.</source>
        <translation>Indiquez un motif : le détenteur le voit, et il est consigné dans l&apos;historique.</translation>
    </message>
</context>
</TS>
