; Inno Setup script for workbench on Windows (Inno Setup 6.2 or later).
; Build the bundle first, then compile this script; build.py does both:
;   python installer\build.py --package
; or by hand:
;   python installer\build.py
;   iscc /DAppVersion=0.1.0 installer\windows\workbench.iss
; Output: dist\workbench-<version>-setup.exe (Start-menu shortcuts, uninstaller, optional desktop
; icon). Per-user or per-machine: the user chooses (per-user needs no administrator rights).

#ifndef AppVersion
  #define AppVersion "0.1.0"
#endif
#define AppName "workbench"
#define Bundle "..\..\dist\workbench"

[Setup]
; The AppId identifies the installation for upgrades and the uninstaller: never change it.
AppId={{6F0C2B7E-3D1A-4C58-9E0B-7A4D5F2C8B31}
AppName={#AppName}
AppVersion={#AppVersion}
AppVerName={#AppName} {#AppVersion}
AppPublisher=workbench developers
AppComments=Work a queue of records in a shared database table without stepping on each other
DefaultDirName={autopf}\{#AppName}
DefaultGroupName={#AppName}
DisableProgramGroupPage=yes
PrivilegesRequired=lowest
PrivilegesRequiredOverridesAllowed=dialog
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
OutputDir=..\..\dist
OutputBaseFilename={#AppName}-{#AppVersion}-setup
SetupIconFile=..\..\resources\icons\workbench.ico
UninstallDisplayIcon={app}\workbench.exe
UninstallDisplayName={#AppName} {#AppVersion}
LicenseFile=..\..\LICENSE
InfoAfterFile=after-install.txt
Compression=lzma2/max
SolidCompression=yes
WizardStyle=modern
; Close a running workbench before files are replaced (its edits are in the journal anyway).
CloseApplications=yes

[Tasks]
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; GroupDescription: "{cm:AdditionalIcons}"; Flags: unchecked

[Files]
; The whole PyInstaller folder: workbench.exe (the window), workbench-cli.exe (the command line,
; for scripts and scheduled tasks), and _internal\ with Python, Qt and the database drivers.
Source: "{#Bundle}\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[Icons]
Name: "{group}\workbench"; Filename: "{app}\workbench.exe"; Comment: "Work the queue"
Name: "{group}\workbench supervisor console"; Filename: "{app}\workbench.exe"; Parameters: "--supervisor"; Comment: "Lock board, queue health, operators"
Name: "{group}\workbench self-test"; Filename: "{cmd}"; Parameters: "/k ""{app}\workbench-cli.exe"" --self-test"; Comment: "Check this installation"
Name: "{group}\Uninstall workbench"; Filename: "{uninstallexe}"
Name: "{autodesktop}\workbench"; Filename: "{app}\workbench.exe"; Tasks: desktopicon

[Run]
Filename: "{app}\workbench.exe"; Description: "{cm:LaunchProgram,workbench}"; Flags: nowait postinstall skipifsilent

; The uninstaller removes what [Files] installed. It keeps each user's settings, connection
; profiles and unsaved-edit journal (%LOCALAPPDATA%\workbench) and the passwords in Windows
; Credential Manager: a reinstall finds them again.
